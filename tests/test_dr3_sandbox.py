"""DR³'s sandbox as published: five corpora per task (32k ... 512k), each holding every supportive
document, distractors and noise apart; a run `<model>-<size>` is served from its own corpus only, CC
says which corpus and its composition, and a corpus that lacks supportive documents is not the
published sandbox (CC N/A saying so). The leaderboard reports DR³ by language, as the paper evaluates
its two sets, through the generic breakdown (`dreval leaderboard --by`)."""
import json
from dataclasses import asdict

import polars as pl
import pytest

from dreval_assets.benchmarks.dr3 import loader as load_dr3
from dreval_assets.benchmarks.dr3.metrics import SUITE as DR3, citation_coverage
from dreval_assets.benchmarks.evidence import ReportEvidence, SandboxDoc
from dreval_assets.cli import main
from dreval_assets.core.metrics import MetricValue
from dreval_assets.core.models import SandboxPage, Task
from dreval_assets.fetch.factory import make_fetcher
from dreval_assets.releases.records import ImportLog
from dreval_assets.stages.fetch import fetch_references
from dreval_assets.stages.frames import frame
from dreval_assets.stages.leaderboard import build_leaderboard, task_attributes
from dreval_assets.stages.tasks import pages_of_run, run_corpus, sandbox_pages, task_frames
from dreval_assets.store.db import Store

SIZES = ("32k", "64k", "128k", "256k", "512k")
SUPPORTIVE = ["Grid storage tender 2024", "Battery price index"]


def corpus(size_index: int) -> list[dict]:
    """A size's corpus as released: every supportive page, distractors growing with the size, noise
    filling the rest (one noise page of its own per size)."""
    docs = [{"title": t, "content": f"{t}: the figures."} for t in SUPPORTIVE]
    docs += [{"title": f"Outdated tender {k}", "content": "an old figure"} for k in range(size_index + 1)]
    docs += [{"title": f"Recipe blog {size_index}", "content": "noise"}]
    return docs


def write_release(root, sizes=SIZES, drop_supportive_at=None):
    task = root / "datasets_en" / "7"
    task.mkdir(parents=True)
    (root / "datasets_en/query.jsonl").write_text(json.dumps({"task": "7", "query": "Storage tenders?"}) + "\n")
    (task / "brief.md").write_text("The tender awarded 300 MWh.")
    for i, size in enumerate(SIZES):
        if size not in sizes:
            continue
        docs = corpus(i)
        if size == drop_supportive_at:
            docs = docs[1:]
        (task / f"long_context_sampled_{size}.json").write_text(json.dumps(docs))
    (task / "useful_search.json").write_text(json.dumps([{"title": t} for t in SUPPORTIVE]))
    (task / "distractor_search.json").write_text(json.dumps([{"title": f"Outdated tender {k}"} for k in range(5)]))
    return root


def load(root):
    log = ImportLog()
    tasks = list(load_dr3.iter_tasks(root, log))
    return tasks, log


def test_corpora_stay_apart_with_roles_and_their_composition_is_recorded(tmp_path):
    (task,), log = load(write_release(tmp_path / "dr3"))
    pages = {p.title: p for p in task.sandbox}
    assert pages["Battery price index"].corpora == list(SIZES) and pages["Battery price index"].role == "supportive"
    assert pages["Outdated tender 3"].corpora == ["256k", "512k"] and pages["Outdated tender 3"].role == "distractor"
    assert pages["Recipe blog 0"].corpora == ["32k"] and pages["Recipe blog 0"].role == "noise"
    composition = json.loads(task.attributes["sandbox_composition"])
    assert list(composition) == list(SIZES)
    assert {k: composition["128k"][k] for k in ("supportive", "distractor", "noise", "distractors_marked")} == \
        {"supportive": 2, "distractor": 3, "noise": 1, "distractors_marked": 1}
    assert composition["512k"]["distractor"] == 5
    assert task.attributes["sandbox_shape"] == "published"
    assert not [n for n in log.notes if "published shape" in str(n)]
    # stored and read back: the page still names its corpora
    frames = task_frames([task])
    assert set(frames["task_sandbox"]["corpora"]) >= {"32k,64k,128k,256k,512k", "256k,512k", "32k"}
    texts = dict(frames["page_texts"].select("text_hash", "text").iter_rows())
    back = {p.title: p for p in sandbox_pages(frames["task_sandbox"], texts)[task.key]}
    assert back["Outdated tender 3"].corpora == ["256k", "512k"]


def test_a_corpus_not_at_its_published_shape_is_said_at_import(tmp_path):
    (task,), log = load(write_release(tmp_path / "dr3", sizes=("32k", "64k", "512k"), drop_supportive_at="64k"))
    shape = task.attributes["sandbox_shape"]
    assert "no 128k, 256k corpus" in shape and "64k holds 1 of 2" in shape
    assert any("sandbox not at its published shape" in str(n) for n in log.notes)


def pages_by_size() -> list[SandboxPage]:
    return [SandboxPage(url="doc:Battery price index", title="Battery price index", role="supportive",
                        text="Battery packs cost 139 dollars per kWh.", corpora=list(SIZES)),
            SandboxPage(url="doc:Outdated tender 4", title="Outdated tender 4", role="distractor",
                        text="Packs cost 600 dollars per kWh.", corpora=["512k"]),
            SandboxPage(url="attachment:datasets_en/7/brief.md", title="brief.md", role="attachment",
                        text="The tender awarded 300 MWh.")]


def test_a_run_is_served_from_its_own_corpus_only():
    pages = pages_by_size()
    assert run_corpus("gpt-4-32k", ["32k", "512k"]) == "32k" and run_corpus("gpt-4", ["32k"]) == ""
    assert run_corpus("m-512k", ["12k", "512k"]) == "512k"  # the longest name that ends the key
    assert [p.title for p in pages_of_run("gpt-4-32k", pages)] == ["Battery price index", "brief.md"]
    assert len(pages_of_run("gpt-4-512k", pages)) == 3 and len(pages_of_run("my-system", pages)) == 3
    claims = pl.DataFrame({"system": ["gpt-4-32k", "gpt-4-512k"], "task": ["dr3.en-7"] * 2,
                           "urls": [["Outdated tender 4", "Battery price index"]] * 2})
    fetched = fetch_references(claims, {"dr3.en-7": pages}, make_fetcher("sandbox"),
                               [("gpt-4-32k", "dr3.en-7"), ("gpt-4-512k", "dr3.en-7")])["fetched_references"]
    status = {(r["system"], r["url"]): (r["status"], r["sandbox_role"]) for r in fetched.iter_rows(named=True)}
    assert status[("gpt-4-512k", "Outdated tender 4")] == ("ok", "distractor")
    assert status[("gpt-4-32k", "Outdated tender 4")][0] == "unknown"  # not in the 32k corpus it searched
    assert status[("gpt-4-32k", "Battery price index")] == ("ok", "supportive")


def evidence(system: str, corpus: str, supportive_in=SIZES) -> ReportEvidence:
    docs = [SandboxDoc("doc:Grid storage tender 2024", "Grid storage tender 2024", "supportive", tuple(supportive_in)),
            SandboxDoc("doc:Battery price index", "Battery price index", "supportive", SIZES),
            SandboxDoc("doc:Outdated tender 4", "Outdated tender 4", "distractor", ("512k",)),
            SandboxDoc("doc:Recipe blog 0", "Recipe blog 0", "noise", ("32k",))]
    return ReportEvidence(system, "dr3.en-7", "dr3", "judge-a", sandbox=docs, corpus=corpus,
                          references=[{"index": 1, "title": "Battery price index"}])


def test_cc_names_the_run_corpus_and_is_na_when_it_lacks_supportive_documents():
    row = citation_coverage(evidence("gpt-4-32k", "32k"))
    assert row.value == pytest.approx(50.0)
    assert row.detail.endswith("corpus 32k: 2 supportive, 0 distractor, 1 noise")
    assert "corpus 512k: 2 supportive, 1 distractor, 0 noise" in citation_coverage(evidence("m-512k", "512k")).detail
    short = citation_coverage(evidence("gpt-4-32k", "32k", supportive_in=("512k",)))
    assert short.value is None and short.na_reason == "data_accessibility"
    assert "32k corpus this run searched lacks 1 of 2 supportive documents" in short.detail
    assert "all sizes (the run names none)" in citation_coverage(evidence("mine", "")).detail


TASKS = {"dr3.en-1": "en", "dr3.en-2": "en", "dr3.zh-1": "zh"}
PARTS = {"en": {"ir": 60.0, "cc": 50.0, "fa": 80.0, "if": 70.0, "dq": 40.0},
         "zh": {"ir": 20.0, "cc": 10.0, "fa": 40.0, "if": 30.0, "dq": 50.0}}


def dr3_scores() -> pl.DataFrame:
    rows = []
    for system, bonus in (("m-32k", 0.0), ("m-512k", -10.0)):
        for task, language in TASKS.items():
            for metric, value in PARTS[language].items():
                v = MetricValue("dr3", metric, value + bonus, "0-100", 1, judge="judge-a" if metric != "cc" else "none")
                rows.append({"system": system, "task": task, **asdict(v)})
            avg = sum(PARTS[language].values()) / 5 + bonus
            rows.append({"system": system, "task": task, **asdict(MetricValue("dr3", "avg", avg, "0-100", 5,
                                                                              judge="judge-a"))})
    return frame("metric_scores", rows)


def dr3_tasks() -> pl.DataFrame:
    return pl.DataFrame({"task": list(TASKS), "language": list(TASKS.values()), "domain": [""] * 3,
                         "modality": ["text"] * 3,
                         "attributes": [json.dumps({"set": lang, "sandbox_shape": "published"})
                                        for lang in TASKS.values()]})


def test_dr3_leaderboard_by_language_as_the_paper_reports_its_two_sets():
    board = build_leaderboard(dr3_scores(), task_attributes=task_attributes(dr3_tasks()))
    mean = {(r["system"], r["metric"]): r["mean"] for r in board.iter_rows(named=True)}
    assert mean[("m-32k", "avg.en")] == pytest.approx(60.0) and mean[("m-32k", "avg.zh")] == pytest.approx(30.0)
    assert mean[("m-32k", "avg")] == pytest.approx(50.0)  # of parts over all three tasks
    assert mean[("m-512k", "fa.zh")] == pytest.approx(30.0)
    assert set(board.filter(pl.col("metric") == "cc.en")["breakdown"]) == {"language=en"}
    assert DR3.spec("avg.zh").aggregate == "of_parts"


def test_cli_leaderboard_by_an_attribute(tmp_path, capsys):
    home = tmp_path / "home"
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    scores = dr3_scores()
    keys = sorted({(r["system"], r["task"]) for r in scores.iter_rows(named=True)})
    store.replace_partitions("metric_scores", keys, {"metric_scores": scores}, "run-1")
    tasks = [Task(key=key, benchmark="dr3", original_id=key[-1], query="q", language=language,
                  attributes={"set": language, "sandbox_shape": "published"}) for key, language in TASKS.items()]
    store.replace_partitions("tasks", [(t.key,) for t in tasks], task_frames(tasks), "run-1")
    attributes = task_attributes(dr3_tasks())
    store.replace_partitions("leaderboard", [()], {"leaderboard": build_leaderboard(scores, None, attributes)},
                             "run-1")
    assert main(["--home", str(home), "leaderboard", "--suite", "dr3"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("system"))
    assert "dr3.avg.en" in header and "dr3.avg.zh" in header and "dr3.fa.en" not in header
    assert main(["--home", str(home), "leaderboard", "--suite", "dr3", "--by", "language"]) == 0
    out = capsys.readouterr().out
    assert "tasks with language = en" in out and "tasks with language = zh" in out
    assert "dr3.fa.en" not in out and "60.0 (2/2)" in out  # m-32k's avg on the two English tasks
    # an attribute no suite declares is computed on request
    assert main(["--home", str(home), "leaderboard", "--suite", "dr3", "--by", "sandbox_shape"]) == 0
    assert "tasks with sandbox_shape = published" in capsys.readouterr().out
    assert main(["--home", str(home), "leaderboard", "--by", "colour"]) != 0
