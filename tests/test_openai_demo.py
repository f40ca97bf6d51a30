"""The demo materialised with the OpenAI judge pointed at our loopback server: twice, the second
time without a single call, with identical scores and no secret anywhere."""
import json
import sys
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

sys.path.insert(0, str(Path(__file__).parent))

from demo_checks import careful_beats_loose  # noqa: E402
from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402

SECRET = "sk-demo-secret-9f8e7d6c5b4a"


@pytest.fixture
def openai_env(monkeypatch):
    with LoopbackLLM(answer=dreval_answer) as llm:
        monkeypatch.setenv("DREVAL_JUDGE", "openai")
        monkeypatch.setenv("DREVAL_JUDGE_MODEL", "loopback-model")
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("DREVAL_JUDGE_PRICES", json.dumps({"loopback-model": {"input_per_mtok": 0.5, "output_per_mtok": 1.5}}))
        yield llm


def all_tables_as_text(store: Store) -> str:
    names = store.query("SELECT table_name FROM duckdb_tables()").to_series().to_list()
    return "".join(repr(store.query(f'SELECT * FROM "{n}"').rows()) for n in names)


def last_metadata(home: Path, asset: str) -> dict:
    instance = DagsterInstance.from_config(str(home / "dagster"))
    event = instance.get_latest_materialization_event(AssetKey(asset))
    return {k: v.value for k, v in event.asset_materialization.metadata.items()}


def test_demo_with_openai_judge_twice(openai_env, home, capsys, monkeypatch):
    llm = openai_env
    assert main(["--home", str(home), "demo"]) == 0
    store = Store(home / "dreval.duckdb")
    first_calls = llm.n_calls
    assert first_calls > 0
    scores = store.query("SELECT * FROM metric_scores ORDER BY ALL")
    judges = set(store.query("SELECT DISTINCT judge FROM claim_verdicts WHERE template <> ''").to_series())
    assert judges == {"loopback-model"}
    means = dict(store.query("SELECT system, mean FROM leaderboard WHERE metric = 'supported_ratio'").iter_rows())
    assert means["careful-scholar"] > means["loose-cannon"] > means["quiet-summarizer"]
    assert careful_beats_loose(store) >= 15
    weights = store.query("SELECT detail FROM metric_scores WHERE suite = 'mmdr' AND metric = 'evi' LIMIT 1").item()
    assert "set by the judge for this task and report" in weights  # TRACE's weights per report, from the judge
    # every MMDR VEF request carries the task's image (paper A.1.2), at MMDR's published temperature 0.2
    vef_calls = store.query("SELECT count(*), min(image_bytes) FROM judge_ledger WHERE template = 'mmdr/vef' "
                            "AND NOT cache_hit").row(0)
    assert vef_calls[0] == 3 and vef_calls[1] > 10_000
    vef_bodies = [r for r in llm.requests if "You check a research report against the images of its task"
                  in json.dumps(r)]
    assert len(vef_bodies) == 3 and all(len(r["_images"]) == 1 and r["temperature"] == 0.2 for r in vef_bodies)

    # every request of a step names the run it was asked for, statements and same-statement questions too
    # (a run's spend in the UI counts them), and that run is one of the home's; the judge check comes first
    instance = DagsterInstance.from_config(str(home / "dagster"))
    named = store.query("SELECT asset, bool_and(run_id IS NOT NULL) FROM judge_ledger GROUP BY asset")
    assert dict(named.iter_rows()) == {"preflight": False} | {asset: True for asset in (
        "task_rubrics", "parsed_reports", "claim_verdicts", "report_judgments", "metric_scores")}
    runs = {run.run_id for run in instance.get_runs()}
    assert set(store.query("SELECT DISTINCT run_id FROM judge_ledger WHERE run_id IS NOT NULL").to_series()) <= runs

    # batching: calls are per source chunk, fewer than the judged claim x source pairs
    judged = store.query("SELECT count(*) FROM claim_verdicts WHERE template <> ''").item()
    verdict_calls = store.query("SELECT count(*) FROM judge_ledger WHERE template LIKE 'claim_verdict%' "
                                "AND NOT cache_hit").item()
    assert 0 < verdict_calls < judged

    # claims are the judge's statements, extracted once per report (every demo report fits one chunk)
    extractions = store.query("SELECT count(*) FROM judge_ledger WHERE template = 'statement_extraction' "
                              "AND NOT cache_hit").item()
    assert extractions == store.query("SELECT count(*) FROM parsed_reports").item() == 24
    assert set(store.query("SELECT DISTINCT extraction FROM report_claims").to_series()) == {"llm"}
    fa_policy = store.query("SELECT policy FROM metric_scores WHERE suite = 'dr3' AND metric = 'fa' LIMIT 1").item()
    assert "statements grounded in" in fa_policy and "claims.extraction = llm" in fa_policy

    assert main(["--home", str(home), "run", "--force"]) == 0
    assert llm.n_calls == first_calls + 1  # the CLI's preflight only: every answer came from the cache
    assert store.query("SELECT * FROM metric_scores ORDER BY ALL").equals(scores)
    meta = last_metadata(home, "claim_verdicts")
    assert meta["judge_calls"] == 0  # each partition's own figures (tests/test_ui_metadata.py) ...
    instance = DagsterInstance.from_config(str(home / "dagster"))
    latest = instance.fetch_materializations(AssetKey("claim_verdicts"), limit=24).records  # the forced runs
    for record in latest:
        shown = {k: v.value for k, v in record.asset_materialization.metadata.items()}
        system, task = str(record.asset_materialization.partition).split("|")
        asked = store.query("SELECT count(*) FROM judge_ledger WHERE run_id = ? AND asset = 'claim_verdicts' "
                            "AND system = ? AND task = ?", [record.run_id, system, task]).item()
        assert shown["judge_calls"] == 0 and shown["judge_requests"] == asked
    totals = [m.value for r in latest for k, m in r.asset_materialization.metadata.items() if k == "run_totals"]
    # ... and the run's totals once (the three systems, due on the same tasks, share one run)
    assert len(totals) == 1 and all("| judge_cache_hit_rate | 1.0 |" in t for t in totals)
    spend = [m.value for r in latest for k, m in r.asset_materialization.metadata.items() if k == "run_judge_spend"]
    assert len(spend) == 1 and all("| claim_verdict" in t and "tvir.cs" in t for t in spend)
    assert all(f"| {system} |" in spend[0] for system in ("careful-scholar", "loose-cannon", "quiet-summarizer"))

    cost = store.query("SELECT system, calls, cache_hits, cost FROM judge_cost_by_system "
                       "WHERE system IS NOT NULL ORDER BY system")  # NULL: task-level calls shared by systems
    assert cost.height == 3 and all(c > 0 for c in cost["cost"])
    by_metric = store.query("SELECT cost FROM judge_cost_by_metric WHERE suite = 'tvir' AND metric = 'cs'").item()
    feeding_cs = store.query("SELECT sum(cost) FROM judge_ledger WHERE template IN "
                             "('claim_verdict', 'claim_verdicts_batch', 'same_statement', 'statement_extraction')"
                             ).item()
    assert by_metric == pytest.approx(feeding_cs) and sum(cost["cost"]) > feeding_cs  # checklists cost too

    rubric = json.loads(store.query("SELECT rubric FROM task_rubrics WHERE task = 'miroeval.37' "
                                    "AND kind = 'miroeval_rubric'").item())
    # the judge's weights, normalised, no cap (the published protocol): the stand-in asked 0.6 for the
    # task-specific dimension and 1/n for each of the n others (tests/judge_answers.py)
    n = len(rubric["weights"])
    assert rubric["weights"]["task_expertise"] == pytest.approx(0.6 / (0.6 + (n - 1) / n))
    assert {d["dimension_id"] for d in rubric["dimensions"] if d["dynamic"]} == {"task_expertise", "grounding"}
    key_facts = [json.loads(r) for r in store.query("SELECT rubric FROM task_rubrics WHERE kind = 'key_facts' "
                                                     "ORDER BY rubric").to_series()]
    assert len(key_facts) == 2  # the ministry brief (a document) and the plant-capacity chart (an image)
    facts = [f for artifact in key_facts for f in artifact["facts"]]
    assert any("540,000 cubic metres" in f for f in facts)  # key facts of the attachments, from the judge
    image_calls = store.query("SELECT count(*), sum(image_bytes) FROM judge_ledger "
                              "WHERE template = 'miroeval/image_key_facts' AND NOT cache_hit").row(0)
    assert image_calls[0] == 1 and image_calls[1] > 10_000  # one vision call for the chart, shared by all

    # a new system: its reports are judged, but the shared task rubrics are not generated again
    def task_level_calls():
        return sum(any(marker in json.dumps(r) for marker in ("You design the grading rubric",
                                                               "A user attached the document below"))
                   for r in llm.requests)
    rubric_calls = task_level_calls()

    def paid_calls_by_system(template):
        return dict(store.query("SELECT system, count(*) FROM judge_ledger WHERE template = ? AND NOT cache_hit "
                                "GROUP BY system", [template]).iter_rows())
    per_report = ("miroeval/process_findings", "miroeval/process_intrinsic", "miroeval/process_alignment",
                  "wlc/gold_coverage", "dr3/insight_recall")
    before_new = {t: paid_calls_by_system(t) for t in per_report}
    assert all(before_new.values())

    extra = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo" / "extra_systems" / "steady-analyst"
    assert main(["--home", str(home), "add-system", "steady-analyst", "--reports", str(extra)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    assert llm.n_calls > first_calls
    assert task_level_calls() == rubric_calls > 0
    # findings, gold coverage and insight recall: the old systems' calls are not made again, the new
    # system's trace (a JSON step array) is read once for findings, once for the intrinsic scores, and
    # its findings once with the report
    after_new = {t: paid_calls_by_system(t) for t in per_report}
    for template in per_report:
        old_systems = {s: n for s, n in after_new[template].items() if s != "steady-analyst"}
        assert old_systems == before_new[template], template
    assert after_new["miroeval/process_findings"]["steady-analyst"] == 1
    assert after_new["miroeval/process_intrinsic"]["steady-analyst"] == 1
    assert after_new["miroeval/process_alignment"]["steady-analyst"] == 1
    steps = store.query("SELECT count(*) FROM trace_steps WHERE system = 'steady-analyst'").item()
    assert steps == 8

    # every suite reads the same extraction: scoring all six on every task asks for no statement again
    def extraction_calls():
        return store.query("SELECT count(*) FROM judge_ledger WHERE template = 'statement_extraction' "
                           "AND NOT cache_hit").item()
    before = extraction_calls()
    monkeypatch.setenv("DREVAL_SUITES", "tvir,mmdr,dr3,wlc,drb,miroeval")
    assert main(["--home", str(home), "run", "--task", "tvir.100001"]) == 0
    assert extraction_calls() == before == 32
    suites = store.query("SELECT count(DISTINCT suite) FROM metric_scores WHERE task = 'tvir.100001'").item()
    assert suites == 7  # core and the six

    assert SECRET not in all_tables_as_text(store)
    for path in (home / "dagster").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in capsys.readouterr().out
