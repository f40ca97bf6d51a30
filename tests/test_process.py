"""MiroEval process evaluation: measured facts and offline scales by hand, the formula, the judgment
rows (N/A buckets), the suite's process rows and Overall, the demo's ordering, the loopback judge."""
import json
import re
import sys
from pathlib import Path

import polars as pl
import pytest

from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.miroeval.metrics import process_metrics
from dreval_assets.benchmarks.miroeval.process import process_score
from dreval_assets.benchmarks.miroeval.process_judgments import (ALIGNMENT_TEMPLATE, FINDINGS_TEMPLATE,
                                                                   INTRINSIC_TEMPLATE, judge_process)
from dreval_assets.benchmarks.miroeval.process_measures import measure, offline_findings, offline_scores
from dreval_assets.core.traces import parse_trace
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.releases import generic_layout
from dreval_assets.releases.records import ImportLog
from dreval_assets.stages.frames import frame
from dreval_assets.stages.tasks import task_frames

sys.path.insert(0, str(Path(__file__).parent))
from judge_answers import dreval_answer  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
SYSTEMS = ("careful-scholar", "loose-cannon", "quiet-summarizer")

TRACE = ("[Step 1] Plan the briefing.\n"
         "[Step 2] Search for \"plant capacity\".\n"
         "[Step 3] Read https://a.example/r: the four plants supply 540,000 cubic metres per day.\n"
         "[Step 4] Search for \"plant capacity\".\n"
         "[Step 5] Read https://www.a.example/r/ again.\n"
         "[Step 6] Search for \"water tariff\".\n"
         "[Step 7] Read https://b.example/t\n"
         "[Step 8] Verify the capacity against the 2019 report.\n"
         "[Step 9] Write the report.")
REPORT = ("# Water\n\nThe four plants supply 540,000 cubic metres per day [1]. The tariff is 1.45 dollars [2]. "
          "The grid is 52 percent renewable [3].\n\n## References\n\n[1] Report https://a.example/r\n"
          "[2] Tariffs https://c.example/x\n[3] Grid https://d.example/g\n")


def test_measured_facts_by_hand():
    parsed = parse_trace(TRACE)
    facts = measure(parsed, TRACE, REPORT, ["The four plants supply 540,000 cubic metres per day.",
                                            "The authority charges 0.99 dollars."])
    assert facts["queries"] == 3 and facts["distinct_queries"] == 2 and facts["repeated_queries"] == 1
    assert facts["pages_read"] == 2 and facts["revisits"] == 1  # www. and trailing slash: the same page
    assert facts["distinct_domains"] == 2 and facts["refined_queries"] == 1  # "water tariff" after the first read
    assert facts["n_verify"] == 1 and facts["n_synthesize"] == 1 and facts["n_steps"] == 9
    # R->P: three checkable claims; the first by URL and figure, the others neither in the trace
    assert (facts["report_claims_checkable"], facts["report_claims_traced"]) == (3, 1)
    assert facts["r_to_p"] == pytest.approx(1 / 3, abs=1e-4)
    assert facts["p_to_r"] == 0.5 and facts["findings_in_report"] == 1  # 0.99 is not in the report


def test_offline_scales_by_hand():
    facts = {"distinct_queries": 2, "distinct_domains": 2, "n_analyze": 1, "n_findings": 2, "refined_queries": 1,
             "n_verify": 1, "queries": 3, "pages_read": 2, "revisits": 1, "repeated_queries": 1,
             "p_to_r": 0.5, "findings_in_report": 1, "r_to_p": 1 / 3, "report_claims_traced": 1,
             "report_claims_checkable": 3}
    got = {d: s for d, (s, _) in offline_scores(facts).items()}
    assert got == {"search_breadth": 4.0,  # 1 + 0.75*2 + 0.75*2
                   "analytical_depth": 3.5,  # 1 + 1.5*1 + 0.5*2
                   "progressive_refinement": 3.0, "critical_thinking": 4.0,
                   "efficiency": 7.0,  # 10 - 9 * 2/6
                   "findings_to_report": 5.5, "report_to_process": 4.0, "contradiction": None}
    many = offline_scores({**facts, "distinct_queries": 30, "n_verify": 9, "revisits": 0, "repeated_queries": 0,
                           "p_to_r": None, "r_to_p": None})
    assert many["search_breadth"][0] == 10.0 and many["critical_thinking"][0] == 10.0  # clamped
    assert many["efficiency"][0] == 10.0 and many["findings_to_report"][0] is None
    nothing = offline_scores({**facts, "queries": 0, "pages_read": 0, "revisits": 0})
    assert nothing["efficiency"][0] is None


def test_process_formula_by_hand():
    intrinsic = dict(search_breadth=7, analytical_depth=8, progressive_refinement=6, critical_thinking=5, efficiency=9)
    assert process_score(intrinsic, dict(findings_to_report=6, report_to_process=8, contradiction=None)) == 70.0
    assert process_score(intrinsic, {"findings_to_report": None}) is None  # a group with nothing scored
    ev = ReportEvidence("s", "t", "miroeval", "j", rubric_scores={
        **{f"miroeval_process.{k}": float(v) for k, v in intrinsic.items()},
        "miroeval_process.findings_to_report": 6.0, "miroeval_process.report_to_process": 8.0,
        "miroeval_process.contradiction": None}, judgment_failures={
        "miroeval_process.contradiction": ("pipeline_failure", "the heuristic judge does not read it")})
    rows = {v.metric: v for v in process_metrics(ev)}
    assert rows["process"].value == 70.0 and rows["process"].n_items == 7
    assert rows["process.search_breadth"].value == 70.0
    assert rows["process.contradiction"].value is None and rows["process.contradiction"].na_reason == "pipeline_failure"
    none = {v.metric: v for v in process_metrics(ReportEvidence("s", "t", "miroeval", "j"))}
    assert none["process"].value is None and none["process"].na_reason == "pipeline_failure"


def test_offline_findings_state_figures_or_names():
    steps = [{"index": 1, "kind": "search", "text": "[web_search] Sarrano 540,000"},
             {"index": 2, "kind": "read", "text": "fetch_url: {\"url\": \"x\"}\n-> The plants supply 540,000 cubic "
                                                  "metres per day. It was sunny. Helioval signed the solar contract "
                                                  "for Campo Seco."},
             {"index": 3, "kind": "analyze", "text": "So the 540,000 cubic metres per day figure holds for 2023."}]
    found = offline_findings(steps)
    assert [f["finding"] for f in found] == ["The plants supply 540,000 cubic metres per day.",
                                             "Helioval signed the solar contract for Campo Seco.",
                                             "So the 540,000 cubic metres per day figure holds for 2023."]
    assert found[0]["strength"] == "strong" and found[0]["related_steps"] == [1, 3]
    assert found[1]["strength"] == "weak"


def demo_inputs(extra=()):
    tasks = [t for t in generic_layout.iter_tasks(DEMO, ImportLog()) if t.benchmark == "miroeval"]
    rows = []
    for system in SYSTEMS:
        for task in tasks:
            folder = DEMO / "systems" / system
            text = (folder / f"{task.original_id}.md").read_text(encoding="utf-8")
            trace = folder / f"{task.original_id}.trace.json"
            rows.append({"system": system, "task": task.key, "status": "ok", "text": text, "n_chars": len(text),
                         "content_hash": "h", "source_path": "", "na_reason": None, "detail": "",
                         "trace": trace.read_text(encoding="utf-8") if trace.is_file() else None})
    rows += [{**rows[0], "system": system, "trace": trace} for system, trace in extra]
    return task_frames(tasks)["tasks"], frame("reports", rows), [(r["system"], r["task"]) for r in rows]


def process_by_system(judgments):
    out = {}
    for (system, _), rows in judgments.group_by(["system", "task"]):
        scores = {i: s for i, s in zip(rows["item_id"], rows["score"])}
        failures = {i: (n, r) for i, n, r in zip(rows["item_id"], rows["na_reason"], rows["reason"]) if n}
        ev = ReportEvidence(system, "t", "miroeval", "j", rubric_scores=scores, judgment_failures=failures)
        out[system] = {v.metric: v for v in process_metrics(ev)}
    return out


def test_offline_process_on_the_demo_and_the_na_buckets():
    tasks, reports, keys = demo_inputs(extra=[("no-trace", None), ("empty-trace", "  "), ("broken", "[{\"role\": ")])
    judgments = judge_process(keys, reports, tasks, HeuristicJudge())
    got = process_by_system(judgments)
    values = {s: got[s]["process"].value for s in SYSTEMS}
    assert values["careful-scholar"] > values["quiet-summarizer"] > values["loose-cannon"], values
    assert values == pytest.approx({"careful-scholar": 83.2, "quiet-summarizer": 65.5, "loose-cannon": 63.1})
    assert got["no-trace"]["process"].na_reason == "data_accessibility"
    assert got["empty-trace"]["process"].na_reason == "model_failure"
    assert got["broken"]["process"].na_reason == "model_failure"  # a few characters of JSON: no step read
    facts = json.loads(judgments.filter((judgments["system"] == "careful-scholar")
                                        & (judgments["kind"] == "process_facts"))["item"].item())
    assert facts["trace_shape"] == "messages" and facts["n_verify"] == 2 and facts["revisits"] == 0
    loose = json.loads(judgments.filter((judgments["system"] == "loose-cannon")
                                        & (judgments["kind"] == "process_facts"))["item"].item())
    assert loose["repeated_queries"] == 2 and loose["revisits"] == 1 and loose["n_verify"] == 0
    found = judgments.filter(judgments["kind"] == "process_finding")
    assert set(found["credit"].to_list()) <= {0.0, 1.0} and found.height > 0


def test_loopback_judge_the_references_calls_per_trace_and_cached(llm, calls):
    """As the reference: findings, then the intrinsic call on the structured process only (steps and
    findings, no report, no facts of ours) and the alignment call on findings and report (no steps),
    both anchored 1-3 / 4-6 / 7-10."""
    tasks, reports, keys = demo_inputs(extra=[("no-trace", None)])
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                        calls)
    judgments = judge_process(keys, reports, tasks, judge)
    assert llm.n_calls == 3 * 3  # findings, intrinsic, alignment per trace; nothing for the traceless report
    prompts = [r["messages"][0]["content"] for r in llm.requests]
    intrinsic = [p for p in prompts if "You evaluate how a deep-research agent researched" in p]
    alignment = [p for p in prompts if "You compare the research process" in p]
    assert len(intrinsic) == len(alignment) == 3
    assert all("<<<TRACE" in p and "<<<FINDINGS" in p and "<<<REPORT" not in p and "<<<FACTS" not in p
               for p in intrinsic)
    assert all("<<<FINDINGS" in p and "<<<REPORT" in p and "<<<TRACE" not in p for p in alignment)
    assert all("1-3" in p and "4-6" in p and "7-10" in p for p in intrinsic + alignment)
    assert not any("cut" in p.split("<<<TRACE", 1)[-1] for p in intrinsic)  # the whole trace, uncut
    got = process_by_system(judgments)
    assert got["careful-scholar"]["process"].value > got["loose-cannon"]["process"].value
    assert got["careful-scholar"]["process.contradiction"].value is not None  # the model scores it
    assert "every step read" in got["careful-scholar"]["process"].detail
    assert got["no-trace"]["process"].na_reason == "data_accessibility"
    templates = dict(judgments.filter(judgments["kind"] == "process").select("item_id", "template").iter_rows())
    assert templates["miroeval_process.efficiency"] == INTRINSIC_TEMPLATE
    assert templates["miroeval_process.contradiction"] == ALIGNMENT_TEMPLATE
    assert FINDINGS_TEMPLATE in set(judgments["template"])
    again = judge_process(keys, reports, tasks, judge)
    assert llm.n_calls == 9 and again["score"].to_list() == judgments["score"].to_list()


def test_changed_trace_reruns_only_its_partition_and_scores_process(tmp_path):
    """A home with the demo's MiroEval task and three folder systems: process scores and Overall come
    out; a changed trace (the report as it was) makes exactly its partition due."""
    import shutil

    from dreval_assets.cli import main
    from dreval_assets.operations.planner import Selection, plan
    from dreval_assets.store.db import Store

    release, home = tmp_path / "release", tmp_path / "home"
    release.mkdir()
    (release / "tasks.jsonl").write_text(next(line for line in (DEMO / "tasks.jsonl").read_text().splitlines()
                                              if json.loads(line)["id"] == "37") + "\n")
    (release / "sandbox.jsonl").write_text("".join(line + "\n" for line in (DEMO / "sandbox.jsonl").read_text()
                                                   .splitlines() if json.loads(line)["task_id"] == "37"))
    (release / "attachments").mkdir()
    shutil.copy(DEMO / "attachments" / "37-ministry-brief.md", release / "attachments")
    shutil.copy(DEMO / "attachments" / "37-plant-capacities.png", release / "attachments")
    assert main(["--home", str(home), "import", "generic", str(release)]) == 0
    for system in SYSTEMS:
        folder = tmp_path / system
        folder.mkdir()
        for name in ("37.md", "37.trace.json"):
            shutil.copy(DEMO / "systems" / system / name, folder / name)
        assert main(["--home", str(home), "add-system", system, "--reports", str(folder)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    store = Store(home / "dreval.duckdb")
    scores = dict(store.query("SELECT system, value FROM metric_scores WHERE metric = 'process'").iter_rows())
    assert scores == pytest.approx({"careful-scholar": 83.2, "quiet-summarizer": 65.5, "loose-cannon": 63.1})
    assert store.query("SELECT count(*) FROM metric_scores WHERE metric = 'overall' AND value IS NULL").item() == 0
    assert store.query("SELECT count(DISTINCT system) FROM trace_steps").item() == 3
    assert plan(store, Selection()).per_system == {}  # nothing changed, nothing due
    trace = tmp_path / "quiet-summarizer" / "37.trace.json"
    trace.write_text(trace.read_text() + "[Step 5] Verify the cost against a second source.\n")
    assert plan(store, Selection()).per_system == {"quiet-summarizer": ["miroeval.37"]}


def long_trace(rounds: int) -> str:
    """The demo's trace repeated `rounds` times (tool call ids renamed): a long research session."""
    messages = json.loads((DEMO / "systems" / "careful-scholar" / "37.trace.json").read_text(encoding="utf-8"))
    text = json.dumps(messages)
    return json.dumps([m for r in range(rounds) for m in json.loads(re.sub(r'"c(\d+)"', f'"r{r}c\\1"', text))])


def test_a_trace_longer_than_the_judge_context_is_read_in_windows_that_fit(calls):
    """A 4,096-token model and a trace of ~65,000 characters: findings and intrinsic scores are asked
    window by window (each prompt fits, none refused, every step read once per kind of call, none cut),
    the findings merged without repeats, each intrinsic dimension the step-weighted mean of the parts."""
    from loopback_llm import LoopbackLLM

    from dreval_assets.judges.context_window import prompt_tokens

    tasks, reports, keys = demo_inputs()
    trace = long_trace(12)
    reports = reports.filter(reports["system"] == "careful-scholar").with_columns(trace=pl.lit(trace))
    with LoopbackLLM(answer=dreval_answer, context_tokens=4096) as llm:
        judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k",
                                              timeout_s=5), calls)
        judgments = judge_process(keys[:1], reports, tasks, judge)
        sent = llm.requests
    prompts = [r["messages"][0]["content"] for r in sent]
    assert all(prompt_tokens(p) + r["max_tokens"] <= 4096 for p, r in zip(prompts, sent))
    n_steps = len(parse_trace(trace).steps)
    for opening in ("You read the research trace", "You evaluate how a deep-research agent researched"):
        parts = [p for p in prompts if opening in p]
        steps = [re.findall(r"^\[(\d+)\]", p.split("<<<TRACE", 1)[1].split("TRACE>>>", 1)[0], re.M) for p in parts]
        assert len(parts) > 1 and sorted(int(i) for s in steps for i in s) == list(range(1, n_steps + 1)), opening
    assert sum("You compare the research process" in p for p in prompts) == 1
    found = judgments.filter(judgments["kind"] == "process_finding")["item"].to_list()
    assert found and len(found) == len(set(found))
    dims = judgments.filter(judgments["kind"] == "process")
    assert dims["na_reason"].null_count() == 8  # every dimension scored
    assert "step-weighted mean" in dims.filter(dims["item_id"] == "miroeval_process.efficiency")["reason"].item()
    seen = judgments.filter(judgments["item_id"] == "miroeval_process.trace_seen")["score"].item()
    assert seen == 1.0  # every step whole


def test_a_step_longer_than_a_window_is_shown_whole_in_parts(calls):
    """One scraped page of ~30,000 characters as one step: no character of it is dropped (it was cut at
    600 once); its parts keep the step's index, each prompt fits a 8,192-token model, trace_seen is 1."""
    from loopback_llm import LoopbackLLM

    from dreval_assets.judges.context_window import prompt_tokens

    tasks, reports, keys = demo_inputs()
    words = ["page" + "".join(chr(97 + k // 26 ** p % 26) for p in range(3)) for k in range(4_000)]
    page = " ".join(w + ("." if k % 12 == 11 else "") for k, w in enumerate(words))  # no figures: no finding
    trace = TRACE.replace("540,000 cubic metres per day.", f"540,000 cubic metres per day. {page} END-OF-PAGE")
    reports = reports.filter(reports["system"] == "careful-scholar").with_columns(trace=pl.lit(trace))
    with LoopbackLLM(answer=dreval_answer, context_tokens=8192) as llm:
        judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k",
                                              timeout_s=5), calls)
        judgments = judge_process(keys[:1], reports, tasks, judge)
        sent = llm.requests
    prompts = [r["messages"][0]["content"] for r in sent]
    assert all(prompt_tokens(p) + r["max_tokens"] <= 8192 for p, r in zip(prompts, sent))
    intrinsic = [p for p in prompts if "You evaluate how a deep-research agent researched" in p]
    lines = [line for p in intrinsic for line in p.split("<<<TRACE", 1)[1].split("TRACE>>>", 1)[0].splitlines()
             if line.startswith("[3] ")]
    assert len(lines) > 2 and all(re.match(r"\[3\] \(\w+\) \(part \d+ of \d+\) ", line) for line in lines)
    lines.sort(key=lambda line: int(re.search(r"\(part (\d+) of", line).group(1)))  # asked at once: any arrival order
    shown = " ".join(line.split(") ", 2)[2] for line in lines)
    assert all(re.search(f"{w}\\b", shown) for w in words) and shown.endswith("END-OF-PAGE")
    seen = judgments.filter(judgments["item_id"] == "miroeval_process.trace_seen")
    assert seen["score"].item() == 1.0 and "1 long step(s) shown in parts" in seen["reason"].item()


def test_a_context_too_small_for_any_step_is_na_saying_so_and_nothing_is_sent(calls):
    from loopback_llm import LoopbackLLM

    tasks, reports, keys = demo_inputs()
    with LoopbackLLM(answer=dreval_answer, context_tokens=1024) as llm:
        judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k",
                                              timeout_s=5), calls)
        judgments = judge_process(keys[:1], reports, tasks, judge)
        sent = len(llm.requests)
    assert sent == 0  # no window emptied to fit, no prompt sent to fail
    dims = judgments.filter(judgments["kind"] == "process")
    assert set(dims["na_reason"]) == {"pipeline_failure"}
    assert all("exceeds the model's context of 1024" in r for r in dims["reason"])


def test_a_provider_failing_every_process_call_is_provider_failure_on_every_row(calls):
    """The eight `process.<dimension>` rows and `process` carry the calls' own bucket (it once read
    pipeline_failure there), so the next plain run retries them."""
    from loopback_llm import LoopbackLLM, status

    tasks, reports, keys = demo_inputs()
    with LoopbackLLM(answer=dreval_answer) as llm:
        llm.fail_next(*[status(503)] * 40)
        judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k",
                                              timeout_s=5, max_attempts=1, concurrency=1), calls)
        judgments = judge_process(keys[:1], reports, tasks, judge)
    [metrics] = process_by_system(judgments).values()
    process = {m: v for m, v in metrics.items() if m == "process" or m.startswith("process.")}
    assert len(process) == 9 and all(v.value is None for v in process.values())
    assert {v.na_reason for v in process.values()} == {"provider_failure"}
