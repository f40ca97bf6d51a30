"""DR³ information recall: the two gold sources kept apart at load, the distractor role, IR_UF / IR_SC /
IR by hand, the judgments with the loopback judge and offline on the demo."""
import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from release_helpers import RELEASES, load_release

from dreval_assets.benchmarks.dr3 import loader as load_dr3
from dreval_assets.benchmarks.dr3.judgments import INSIGHT_BATCH, evidence_inputs, judge_insight_recall
from dreval_assets.benchmarks.dr3.metrics import information_recall
from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.releases import generic_layout
from dreval_assets.releases.records import ImportLog
from dreval_assets.stages.frames import SCHEMAS, frame
from dreval_assets.stages.tasks import task_frames
from loopback_llm import status

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
SYSTEMS = ("careful-scholar", "loose-cannon", "quiet-summarizer")


# --- loader ---------------------------------------------------------------------------------------

def test_the_two_gold_sources_and_the_distractors_load_apart(tmp_path):
    root = tmp_path / "dr3"
    shutil.copytree(RELEASES / "dr3", root)
    (root / "datasets_en/1/distractor_search.json").write_text(json.dumps([{"title": "Alpine cheese festival guide"}]))
    corpus = root / "datasets_en/002/long_context_sampled_32k.json"
    docs = json.loads(corpus.read_text())
    docs[1]["type"] = "Distractor"  # the document marks itself
    corpus.write_text(json.dumps(docs))
    tasks, _, log = load_release(load_dr3, root)
    one = tasks["dr3.en-1"]
    assert one.gold_insights == ["The rebate paid 1,200 per unit.", "Uptake rose from 140 to 410 installations."]
    assert one.gold_insights_sandbox == ["Installations roughly tripled in 2023.", "The rebate paid 1,200 per unit."]
    assert [(p.title, p.role) for p in one.sandbox] == [
        ("Valley rebate programme results", "supportive"), ("Alpine cheese festival guide", "distractor"),
        ("Installer workforce survey 2023", "supportive")]
    assert "datasets_en/1/distractor_search.json" not in one.attachments  # a marker file, not a user file
    assert [(p.title, p.role) for p in tasks["dr3.en-2"].sandbox] == [
        ("Trail closure survey", "supportive"), ("Ski resort opening hours", "distractor")]
    assert tasks["dr3.zh-1"].gold_insights == [] and tasks["dr3.zh-1"].gold_insights_sandbox
    frames = task_frames([one])["tasks"]  # both sources reach the tasks table, apart
    assert frames["gold_insights"].to_list() == [one.gold_insights]
    assert frames["gold_insights_sandbox"].to_list() == [one.gold_insights_sandbox]


def test_the_generic_layout_reads_both_sources():
    tasks = {t.original_id: t for t in generic_layout.iter_tasks(DEMO, ImportLog()) if t.benchmark == "dr3"}
    assert len(tasks["dr3-en-004"].gold_insights) == 3 and len(tasks["dr3-en-004"].gold_insights_sandbox) == 4
    assert len(tasks["dr3-en-011"].gold_insights) == 2 and len(tasks["dr3-en-011"].gold_insights_sandbox) == 4


# --- formulas by hand -----------------------------------------------------------------------------

def evidence(uf=(), sc=(), n_uf=None, n_sc=None, failures=None, policies=None):
    scores = {f"dr3.ir.uf.i{n:02d}": c for n, c in enumerate(uf, 1)}
    scores |= {f"dr3.ir.sc.i{n:02d}": c for n, c in enumerate(sc, 1)}
    n = {"uf": len(uf) if n_uf is None else n_uf, "sc": len(sc) if n_sc is None else n_sc}
    return ReportEvidence("s", "t", "dr3", "j", rubric_scores=scores, inputs={"dr3.insights": n},
                          judgment_failures=failures or {}, policies=policies or {})


def by_metric(values):
    return {v.metric: v for v in values}


def test_recall_counts_full_credits_by_default_and_half_by_policy():
    m = by_metric(information_recall(evidence(uf=(1.0, 0.5, 0.0, 1.0), sc=(1.0, 1.0, 0.0))))
    assert m["ir_uf"].value == pytest.approx(50.0)  # 2 of 4 fully covered; the 0.5 counts 0
    assert m["ir_sc"].value == pytest.approx(200 / 3)
    assert m["ir"].value == pytest.approx((50.0 + 200 / 3) / 2)
    assert m["ir_uf"].detail == "insights from the user files: 2 covered, 1 partly, 1 not, of 4 judged"
    half = by_metric(information_recall(evidence(uf=(1.0, 0.5, 0.0, 1.0), sc=(1.0, 1.0, 0.0),
                                                 policies={"dr3.ir.partial": "half"})))
    assert half["ir_uf"].value == pytest.approx(62.5)  # (1 + 0.5 + 0 + 1) / 4
    assert "partly counts half" in half["ir_uf"].policy


def test_a_source_without_gold_leaves_ir_to_the_other_and_no_gold_is_never_100():
    m = by_metric(information_recall(evidence(uf=(1.0, 0.0))))
    assert m["ir_sc"].value is None and m["ir_sc"].na_reason == "data_accessibility"
    assert m["ir"].value == pytest.approx(50.0) and "IR is ir_uf's alone" in m["ir"].detail
    none = by_metric(information_recall(evidence()))
    assert all(v.value is None and v.na_reason == "data_accessibility" for v in none.values())
    scored = by_metric(SUITES["dr3"].score(evidence()))
    assert scored["avg"].value is None and "ir N/A" in scored["avg"].detail


def test_a_failed_judgment_is_na_with_its_bucket_not_the_other_sources_number():
    failures = {"dr3.ir.sc.i01": ("provider_failure", "HTTP 503"), "dr3.ir.sc.i02": ("provider_failure", "HTTP 503")}
    m = by_metric(information_recall(evidence(uf=(1.0,), sc=(None, None), failures=failures)))
    assert m["ir_sc"].value is None and m["ir_sc"].na_reason == "provider_failure" and "HTTP 503" in m["ir_sc"].detail
    assert m["ir"].value is None and m["ir"].na_reason == "provider_failure"
    partly = by_metric(information_recall(evidence(uf=(1.0, None, 0.0))))  # one item failed: the judged two count
    assert partly["ir_uf"].value == pytest.approx(50.0) and "1 not judged" in partly["ir_uf"].detail
    missing = by_metric(information_recall(evidence(n_uf=2)))  # gold, but no judgment rows at all
    assert missing["ir_uf"].na_reason == "pipeline_failure"


def test_avg_uses_ir():
    ev = evidence(uf=(1.0, 0.0), sc=(1.0,))
    ev.rubric_scores["dr3.dq.depth"] = 7.0
    m = by_metric(SUITES["dr3"].score(ev))
    assert m["ir"].value == pytest.approx(75.0)
    assert m["fa"].value == 0.0  # no claim-citation pair => 0 (methods/dr3.md)
    assert m["avg"].value is None and "cc N/A" in m["avg"].detail and "ir N/A" not in m["avg"].detail  # IR is there


# --- judgments on the demo ----------------------------------------------------------------------

def demo_inputs():
    tasks = [t for t in generic_layout.iter_tasks(DEMO, ImportLog()) if t.benchmark == "dr3"]
    rows = []
    for system in SYSTEMS:
        for task in tasks:
            text = (DEMO / "systems" / system / f"{task.original_id}.md").read_text(encoding="utf-8")
            rows.append({"system": system, "task": task.key, "status": "ok", "text": text, "n_chars": len(text),
                         "content_hash": "h", "source_path": "", "na_reason": None, "detail": ""})
    rows.append({"system": "broken", "task": tasks[0].key, "status": "failed", "text": None, "n_chars": 0,
                 "content_hash": None, "source_path": "", "na_reason": "model_failure", "detail": "no report"})
    blank = dict.fromkeys(SCHEMAS["reports"])  # columns this test does not need stay empty
    return (task_frames(tasks)["tasks"], frame("reports", [{**blank, **r} for r in rows]),
            [(r["system"], r["task"]) for r in rows])


def recall_values(judgments, tasks):
    inputs = evidence_inputs(list(tasks.iter_rows(named=True)), None, HeuristicJudge())
    found = {}
    for (system, task), rows in judgments.group_by(["system", "task"]):
        ev = ReportEvidence(system, task, "dr3", "j", rubric_scores=dict(zip(rows["item_id"], rows["score"])),
                            inputs=inputs[task])
        found[(system, task)] = {v.metric: v.value for v in information_recall(ev)}
    return found


OFFLINE = {  # (IR_UF, IR_SC, IR) per system: dr3-en-004, dr3-en-011
    "careful-scholar": [(100.0, 100.0, 100.0), (50.0, 100.0, 75.0)],
    "loose-cannon": [(0.0, 25.0, 12.5), (50.0, 25.0, 37.5)],
    "quiet-summarizer": [(0.0, 0.0, 0.0), (0.0, 0.0, 0.0)],
}


def test_offline_recall_on_the_demo_orders_careful_loose_quiet():
    tasks, reports, keys = demo_inputs()
    judgments = judge_insight_recall(keys, reports, tasks, HeuristicJudge())
    assert judgments.filter(judgments["system"] == "broken").height == 0  # an unreadable report is the suite's N/A
    assert set(judgments["kind"]) == {"insight_recall"} and judgments["score"].null_count() == 0
    values = recall_values(judgments, tasks)
    for system, expected in OFFLINE.items():
        got = [tuple(values[(system, f"dr3.dr3-en-{n}")][m] for m in ("ir_uf", "ir_sc", "ir")) for n in ("004", "011")]
        assert got == [pytest.approx(e) for e in expected], system
    loose = judgments.filter((judgments["system"] == "loose-cannon") & (judgments["task"] == "dr3.dr3-en-004")
                             & (judgments["item_id"] == "dr3.ir.sc.i03"))
    assert loose["score"].item() == 0.0 and "19,800" in loose["reason"].item()  # a wrong figure is not recall


def test_loopback_judge_one_call_per_source_batch(llm, calls):
    tasks, reports, keys = demo_inputs()
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                        calls)
    judgments = judge_insight_recall(keys, reports, tasks, judge)
    assert llm.n_calls == 2 * 6  # per report one batch per source (at most 4 insights each here)
    values = recall_values(judgments, tasks)
    offline = recall_values(judge_insight_recall(keys, reports, tasks, HeuristicJudge()), tasks)
    assert values == offline  # the stand-in answers as the offline matcher does
    assert llm.prompt_tokens_total > 0
    again = judge_insight_recall(keys, reports, tasks, judge)  # cached: no new call
    assert llm.n_calls == 12 and again["score"].to_list() == judgments["score"].to_list()


def test_long_insight_lists_are_batched_and_a_failed_batch_fails_its_items(llm, calls):
    tasks, reports, keys = demo_inputs()
    row = tasks.row(0, named=True)
    many = [f"Insight number {n} about the programme in county {n}." for n in range(1, INSIGHT_BATCH + 3)]
    tasks = task_frames([load_dr3_task(row, many)])["tasks"]
    key = [(s, t) for s, t in keys if t == row["task"] and s == "careful-scholar"]
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5,
                                          max_attempts=1, concurrency=1), calls)
    llm.fail_next(status(401))
    judgments = judge_insight_recall(key, reports, tasks, judge)
    assert llm.n_calls == 3  # 12 user-file insights in two batches, the sandbox's in one
    failed = judgments.filter(judgments["score"].is_null())
    assert failed["item_id"].to_list() == [f"dr3.ir.uf.i{n:02d}" for n in range(1, INSIGHT_BATCH + 1)]
    assert set(failed["na_reason"]) == {"provider_failure"}  # only the first batch failed


def load_dr3_task(row, insights):
    from dreval_assets.core.models import Task
    return Task(key=row["task"], benchmark="dr3", original_id=row["original_id"], query=row["query"],
                gold_insights=insights, gold_insights_sandbox=row["gold_insights_sandbox"])


def test_a_long_report_shows_the_passages_that_fit_a_small_context(calls):
    """A 3,072-token model and a report of ~40,000 characters: each recall prompt carries the passages
    that fit beside its insights and answer (none refused), and the insight's own passage is among them."""
    from loopback_llm import LoopbackLLM

    from dreval_assets.judges.context_window import prompt_tokens
    from judge_answers import dreval_answer

    tasks, reports, keys = demo_inputs()
    key = [k for k in keys if k[0] == "careful-scholar"][:1]
    filler = "\n\n".join(f"Paragraph {n} restates background on county budgets and staffing levels."
                         for n in range(600))
    reports = reports.with_columns(text=pl.concat_str([pl.lit(filler + "\n\n"), pl.col("text")]))
    with LoopbackLLM(answer=dreval_answer, context_tokens=3072) as llm:
        judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k",
                                              timeout_s=5), calls)
        judgments = judge_insight_recall(key, reports, tasks, judge)
        sent = llm.requests
    assert len(sent) == 2 and all(prompt_tokens(r["messages"][0]["content"]) + r["max_tokens"] <= 3072 for r in sent)
    assert judgments["na_reason"].null_count() == judgments.height  # every insight judged
    offline = recall_values(judge_insight_recall(key, reports, tasks, HeuristicJudge()), tasks)
    assert recall_values(judgments, tasks) == offline  # the passages that matter were shown
