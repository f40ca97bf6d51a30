"""MMDR FLAE: the formula channel, the fusion with the judge channel, and the stage."""
import pytest

from dreval_assets.benchmarks.mmdr import metrics as mmdr
from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.flae_features import flae_observables, formula_channel
from dreval_assets.benchmarks.policies import policy_value
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.judges.prompts import render
from loopback_llm import status
from dreval_assets.stages.frames import frame
from dreval_assets.benchmarks.mmdr.judgments import judge_flae
from recording_judge import RecordingJudge
from task_frames import tasks_table

GOOD = ("# Grid batteries\n\n## Growth\n" + "Storage grew to 6.8 gigawatts in 2024 because auctions paid for "
        "availability [1]. However, the southern zone holds most of it, which is a risk [1].\n" * 6
        + "\n## Outlook\nThe operator expects 3.1 gigawatts more in 2025 [2].\n\n## Prices\nPrices fell.\n\n"
        "## Risks\nCurtailment rose.\n\n## References\n[1] Report https://grid.example/a\n[2] Plan https://grid.example/b\n")
POOR = "batteries. batteries are good. very good. ok."


def test_formula_channel_and_alpha_prefer_a_structured_cited_report():
    good, poor = flae_observables(GOOD, False), flae_observables(POOR, False)
    assert good["heading_coverage"] == 1.0 and good["reference_validity"] == 1.0 and poor["reference_validity"] == 0.0
    f_good, f_poor = formula_channel(good), formula_channel(poor)
    assert f_good["stru"] > f_poor["stru"] and f_good["insh"] > f_poor["insh"]
    alpha_good = mmdr.alpha_det(good["length_completeness"], good["heading_coverage"], good["citation_compliance"],
                                good["reference_validity"])
    alpha_poor = mmdr.alpha_det(poor["length_completeness"], poor["heading_coverage"], poor["citation_compliance"],
                                poor["reference_validity"])
    assert alpha_poor > alpha_good  # a poor report leans on the formula channel


def test_suite_fuses_the_channels_by_hand():
    parts = {"mmdr.flae.read_form": 0.6, "mmdr.flae.insh_form": 0.4, "mmdr.flae.stru_form": 0.8, "mmdr.flae.alpha": 0.25,
             "mmdr.flae.read_judge": 0.8, "mmdr.flae.insh_judge": 0.6, "mmdr.flae.stru_judge": 0.6,
             "mmdr.flae.weight_read": 2.0, "mmdr.flae.weight_insh": 1.0, "mmdr.flae.weight_stru": 1.0}
    m = {v.metric: v for v in SUITES["mmdr"].score(ReportEvidence("s", "t", "mmdr", "j", rubric_scores=parts))}
    assert m["read"].value == pytest.approx(100 * (0.25 * 0.6 + 0.75 * 0.8))
    assert m["flae"].value == pytest.approx(mmdr.flae({"read": 0.6, "insh": 0.4, "stru": 0.8},
                                                      {"read": 0.8, "insh": 0.6, "stru": 0.6}, 0.25,
                                                      {"read": 2, "insh": 1, "stru": 1}))
    failed = dict(parts, **{"mmdr.flae.read_judge": None})
    m2 = {v.metric: v for v in SUITES["mmdr"].score(ReportEvidence("s", "t", "mmdr", "j", rubric_scores=failed))}
    assert m2["flae"].value is None and m2["flae"].na_reason == "provider_failure"


def test_a_failed_alpha_call_is_na_not_alpha_det():
    """The judge answered without an alpha: alpha_det stands (the paper's fallback). The alpha call
    failed: READ, INSH, STRU and FLAE are N/A with its reason (they were 66.57 -> 41.91 before)."""
    parts = {"mmdr.flae.read_form": 0.6, "mmdr.flae.insh_form": 0.4, "mmdr.flae.stru_form": 0.8, "mmdr.flae.alpha": 0.25,
             "mmdr.flae.read_judge": 0.8, "mmdr.flae.insh_judge": 0.6, "mmdr.flae.stru_judge": 0.6,
             "mmdr.flae.weight_read": 2.0, "mmdr.flae.weight_insh": 1.0, "mmdr.flae.weight_stru": 1.0,
             "mmdr.flae.alpha_judge": None}
    unset = {v.metric: v for v in SUITES["mmdr"].score(ReportEvidence("s", "t", "mmdr", "j", rubric_scores=parts))}
    assert unset["flae"].value is not None and "alpha_det = 0.250 stands" in unset["flae"].policy
    failed = ReportEvidence("s", "t", "mmdr", "j", rubric_scores=parts, judgment_failures={
        "mmdr.flae.alpha_judge": ("provider_failure", "gave up after 4 attempts: 500")})
    m = {v.metric: v for v in SUITES["mmdr"].score(failed)}
    for metric in ("read", "insh", "stru", "flae"):
        assert m[metric].value is None and m[metric].na_reason == "provider_failure"
        assert "alpha call failed: gave up after 4 attempts" in m[metric].detail


FORMULA_AND_ALPHA_DET = {f"mmdr.flae.{n}" for n in ("read_form", "insh_form", "stru_form", "alpha")}
JUDGED = {f"mmdr.flae.{n}" for n in ("read_judge", "insh_judge", "stru_judge", "weight_read", "weight_insh",
                                     "weight_stru")}


def stage_inputs(text=GOOD):
    tasks = tasks_table(benchmark="mmdr", modality="multimodal", query="How did grid batteries grow in 2024?")
    reports = frame("reports", [{"system": "s", "task": "t", "status": "ok", "text": text, "n_chars": 1,
                                 "content_hash": "x", "source_path": None, "na_reason": None, "detail": ""}])
    return reports, tasks


def test_separate_protocol_asks_scores_weights_and_alpha_in_three_calls():
    judge = RecordingJudge()
    rows = judge_flae([("s", "t")], *stage_inputs(), judge)  # the default protocol: separate
    assert [r.template for r in judge.requests] == ["mmdr/flae_judge_scores", "mmdr/flae_weights", "mmdr/flae_alpha"]
    assert set(rows["item_id"]) == FORMULA_AND_ALPHA_DET | JUDGED  # the offline judge sets no alpha: no alpha_judge
    template = dict(zip(rows["item_id"], rows["template"]))
    assert template["mmdr.flae.read_judge"] == "mmdr/flae_judge_scores"
    assert template["mmdr.flae.weight_insh"] == "mmdr/flae_weights"
    by_id = dict(zip(rows["item_id"], rows["score"]))
    assert by_id["mmdr.flae.read_judge"] == pytest.approx(by_id["mmdr.flae.read_form"])  # fallback: formula again
    assert by_id["mmdr.flae.weight_read"] == pytest.approx(1 / 3)
    prompts = [render(r.template, dict(r.variables)) for r in judge.requests]
    assert "How did grid batteries grow in 2024?" in prompts[0] and "<<<REPORT" in prompts[0]
    assert "How did grid batteries grow in 2024?" in prompts[1]
    assert "heading coverage (sections / 4, at most 1): 1.00" in prompts[1]
    assert "<<<REPORT" not in prompts[1]  # the weights read the task and the observables
    # alpha weighs this report for this task: the prompt shows both, and the observables
    report = judge.requests[2].variables["report"]
    assert "How did grid batteries grow in 2024?" in prompts[2] and f"<<<REPORT\n{report}\nREPORT>>>" in prompts[2]
    assert "heading coverage (sections / 4, at most 1): 1.00" in prompts[2]


def test_single_call_protocol_is_one_call_with_the_same_items():
    judge = HeuristicJudge()
    rows = judge_flae([("s", "t")], *stage_inputs(), judge, policies={"mmdr.flae.protocol": "single_call"})
    assert judge.stats.requests == 1
    assert set(rows["item_id"]) == FORMULA_AND_ALPHA_DET | JUDGED and set(rows["template"]) == {"mmdr/flae_scores"}
    separate = judge_flae([("s", "t")], *stage_inputs(), HeuristicJudge())
    assert sorted(zip(rows["item_id"], rows["score"])) == sorted(zip(separate["item_id"], separate["score"]))


def test_judge_alpha_is_the_default_and_alpha_det_the_fallback(llm, calls):
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                        calls)
    rows = judge_flae([("s", "t")], *stage_inputs(), judge)
    assert llm.n_calls == 3
    by_id = dict(zip(rows["item_id"], rows["score"]))
    assert by_id["mmdr.flae.alpha_judge"] == 0.25 and by_id["mmdr.flae.weight_insh"] == 0.5
    assert "mmdr.flae.protocol=separate" in rows.filter(rows["item_id"] == "mmdr.flae.alpha_judge")["reason"].item()
    evidence = ReportEvidence("s", "t", "mmdr", "loopback-model", rubric_scores=by_id)
    m = {v.metric: v for v in SUITES["mmdr"].score(evidence)}
    assert "set by the judge" in m["read"].policy
    assert m["read"].value == pytest.approx(100 * (0.25 * by_id["mmdr.flae.read_form"]
                                                   + 0.75 * by_id["mmdr.flae.read_judge"]))
    offline = judge_flae([("s", "t")], *stage_inputs(), HeuristicJudge())
    parts = dict(zip(offline["item_id"], offline["score"]))
    evidence = ReportEvidence("s", "t", "mmdr", "heuristic-v1", rubric_scores=parts)
    m = {v.metric: v for v in SUITES["mmdr"].score(evidence)}
    assert "the judge set no alpha" in m["read"].policy  # no judge alpha: alpha_det stands, and the row says so
    assert m["read"].value == pytest.approx(100 * parts["mmdr.flae.read_form"])
    assert policy_value({}, "mmdr.flae.alpha") == "judge" and policy_value({}, "mmdr.flae.protocol") == "separate"


def test_a_failed_weights_call_fails_only_its_items(llm, calls):
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5,
                                          max_attempts=1, concurrency=1), calls)
    llm.fail_next(status(401))  # the first call asked (scores) fails for good
    rows = judge_flae([("s", "t")], *stage_inputs(), judge)
    failed = rows.filter(rows["score"].is_null())
    assert set(failed["item_id"]) == {"mmdr.flae.read_judge", "mmdr.flae.insh_judge", "mmdr.flae.stru_judge"}
    assert set(failed["na_reason"]) == {"provider_failure"}
    assert rows.filter(rows["item_id"] == "mmdr.flae.weight_read")["score"].item() == 0.3


def test_trace_weights_are_asked_per_report_with_the_task_and_the_report(llm, calls):
    """TRACE's W_k per report, as the paper derives them; the offline judge cannot, and says so (N/A)."""
    from dreval_assets.benchmarks.judging import JudgmentContext
    from dreval_assets.benchmarks.mmdr.trace_weights import judge_trace_weights

    def ctx(judge, policies=None):
        reports, tasks = stage_inputs()
        return JudgmentContext([("s", "t")], reports, tasks, frame("task_rubrics", []), judge,
                               policies=policies or {})

    recording = RecordingJudge()
    rows = judge_trace_weights(ctx(recording))
    [request] = recording.requests
    prompt = render(request.template, dict(request.variables))
    assert "How did grid batteries grow in 2024?" in prompt and "<<<REPORT\n# Grid batteries" in prompt
    assert rows["score"].null_count() == 3 and set(rows["na_reason"]) == {"pipeline_failure"}
    assert all(r.startswith("TRACE weights not set: judge limit: the offline judge cannot set") for r in rows["reason"])
    assert judge_trace_weights(ctx(RecordingJudge(), {"mmdr.trace.weights": "equal"})).height == 0  # no call
    judged = judge_trace_weights(ctx(OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url,
                                                                    api_key="k", timeout_s=5), calls)))
    assert dict(zip(judged["item_id"], judged["score"])) == {
        "mmdr.trace.weight_con": 0.3, "mmdr.trace.weight_cov": 0.2, "mmdr.trace.weight_fid": 0.5}
