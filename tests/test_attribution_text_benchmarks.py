"""Who is at fault, on the text benchmarks (MiroEval, DR³, Wiki Live, DRB, core, TVIR CS): a metric with
nothing checkable is N/A with our reason, never a number; what does not apply is not applicable; a
report citing nothing has DR³ FA 0; a value built from k of n judgeable items carries k/n and the
unjudged items' bucket, and unjudged items never count as failed ones."""
import pytest

from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SandboxDoc, SourceVerdict
from dreval_assets.benchmarks.miroeval.metrics import synthesis_metrics
from dreval_assets.benchmarks.miroeval.process_measures import offline_scores
from dreval_assets.benchmarks.miroeval.process_judgments import judge_process
from dreval_assets.benchmarks.miroeval.rubric import offline_rubric
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.core.metrics import JUDGE_LIMIT, is_judge_limit
from dreval_assets.judges.heuristic import HeuristicJudge

from test_process import demo_inputs, process_by_system

A, B = "https://a.example/1", "https://b.example/2"


def evidence(claims, benchmark="generic", **extra):
    return ReportEvidence("s", "t", benchmark, "judge-x", claims=list(claims), **extra)


def rows(suite, ev):
    return {v.metric: v for v in SUITES[suite].score(ev)}


def cited(cid, *verdicts):
    return ClaimEvidence(cid, "sentence", f"The ferry carried {cid} passengers in 2023.",
                         tuple(v.source for v in verdicts if v.origin == "cited"), (), tuple(verdicts))


def uncited(cid, *verdicts):
    return ClaimEvidence(cid, "uncited", f"Ridership of line {cid} rose in 2023.", (), (), tuple(verdicts))


def unread(url, reason="data_accessibility"):
    return SourceVerdict(url, "unknown", "cited", reason, "bot wall")


FACT_COUNTS = ("factuality", "right", "wrong", "conflict", "unknown")


# --- rule 1: MiroEval factuality with nothing checkable is N/A (ours), never 0 -----------------------------

def test_miroeval_factuality_with_no_evidence_source_is_na_naming_the_search_setting():
    got = rows("miroeval", evidence([uncited("u1"), uncited("u2")], "miroeval"))
    for metric in FACT_COUNTS:  # the counts too: 0 statements judged are not honest zeros
        row = got[metric]
        assert (row.value, row.na_reason) == (None, "pipeline_failure"), (metric, row)
        assert "no evidence source" in row.detail and "DREVAL_EVIDENCE_SEARCH=web" in row.detail
    assert got["overall"].value is None and "factuality N/A (pipeline_failure" in got["overall"].detail


def test_miroeval_statements_never_checked_are_left_out_not_unknown():
    got = rows("miroeval", evidence([cited("c1", SourceVerdict(A, "supported")), uncited("u1"), uncited("u2")],
                                    "miroeval"))
    assert got["factuality"].value == 100.0 and got["unknown"].value == 0.0  # was 33.3: two unchecked as UNKNOWN
    assert (got["factuality"].judged_share, got["factuality"].unjudged_reason) == (pytest.approx(1 / 3),
                                                                                   "pipeline_failure")
    assert "statements judged 1 of 3" in got["factuality"].detail
    assert got["factuality"].n_items == 1  # the pooled (micro) right ratio counts judged statements only


def test_miroeval_a_search_that_found_nothing_is_a_decided_unknown():
    sandbox = [SandboxDoc("sandbox://p1", "Ferry note", "supportive")]  # the sandbox search looked for each one
    got = rows("miroeval", evidence([cited("c1", SourceVerdict(A, "supported")), uncited("u1")], "miroeval",
                                    sandbox=sandbox))
    assert got["factuality"].value == 50.0 and got["unknown"].value == 1.0
    assert got["factuality"].judged_share is None


def test_miroeval_a_statement_whose_sources_all_went_unread_is_not_unknown():
    got = rows("miroeval", evidence([cited("c1", SourceVerdict(A, "supported")), cited("c2", unread(B))], "miroeval"))
    assert got["factuality"].value == 100.0 and got["unknown"].value == 0.0
    assert (got["factuality"].judged_share, got["factuality"].unjudged_reason) == (0.5, "data_accessibility")


# --- rule 2: MiroEval Grounding without attachments does not apply ----------------------------------------

def rubric_evidence(has_attachments, **extra):
    rubric = offline_rubric("How did ferry ridership change in 2023?", has_attachments)
    return evidence([], "miroeval", inputs={"miroeval.rubric": rubric}, **extra)


def test_miroeval_grounding_without_attachments_is_not_applicable():
    grounding = {v.metric: v for v in synthesis_metrics(rubric_evidence(False))}["grounding"]
    assert (grounding.value, grounding.na_reason) == (None, "not_applicable")


def test_miroeval_grounding_with_attachments_none_readable_stays_a_failure_of_ours():
    grounding = {v.metric: v for v in synthesis_metrics(rubric_evidence(False, attachments=["files/a.xlsx"]))}[
        "grounding"]
    assert grounding.na_reason == "data_accessibility" and "files/a.xlsx" in grounding.detail


# --- rule 3: DR³ FA of a report that cites nothing is 0 ----------------------------------------------------

def test_dr3_fa_of_a_report_citing_nothing_is_zero():
    fa = rows("dr3", evidence([uncited("u1"), uncited("u2")], "dr3"))["fa"]
    assert fa.value == 0.0 and fa.detail == "no claim-citation pairs" and "no claim-citation pair => 0" in fa.policy
    one = rows("dr3", evidence([cited("c1", SourceVerdict(A, "supported")), uncited("u1")], "dr3"))["fa"]
    assert one.value == 100.0  # one pair, judged: the paper's mean


def test_dr3_fa_pairs_none_judged_stay_na_and_unread_pairs_are_not_zeros():
    none = rows("dr3", evidence([cited("c1", unread(A)), cited("c2", unread(B))], "dr3"))["fa"]
    assert (none.value, none.na_reason) == (None, "data_accessibility")
    some = rows("dr3", evidence([cited("c1", SourceVerdict(A, "supported")), cited("c2", unread(B))], "dr3"))["fa"]
    assert some.value == 100.0 and (some.judged_share, some.unjudged_reason) == (0.5, "data_accessibility")
    judged_unknown = evidence([cited("c1", SourceVerdict(A, "supported")), cited("c2", SourceVerdict(B, "unknown"))])
    assert rows("dr3", judged_unknown)["fa"].value == 50.0  # the judge's own unknown counts 0 (dr3.fa.unknown = zero)


# --- rule 4: values built from k of n judgeable items carry k/n -------------------------------------------

CARRIED = [("core", "supported_ratio"), ("core", "contradicted_ratio"), ("tvir", "cs"), ("tvir", "aec"),
           ("dr3", "fa"), ("wlc", "ref_acc"), ("wlc", "ref_conf"), ("drb", "fact_accuracy"),
           ("drb", "effective_citations"), ("miroeval", "factuality")]


@pytest.mark.parametrize(("suite", "metric"), CARRIED)
def test_claim_metrics_carry_the_judged_share_and_the_unjudged_bucket(suite, metric):
    ev = evidence([cited("c1", SourceVerdict(A, "supported")), cited("c2", unread(B, "provider_failure")),
                   cited("c3", SourceVerdict(A, "contradicted"))])
    row = rows(suite, ev)[metric]
    assert row.value is not None and row.judged_share == pytest.approx(2 / 3), row
    assert row.unjudged_reason == "provider_failure"


@pytest.mark.parametrize(("suite", "metric", "value"), [
    ("core", "supported_ratio", 50.0), ("tvir", "cs", 50.0), ("dr3", "fa", 50.0), ("wlc", "ref_acc", 50.0),
    ("drb", "fact_accuracy", 50.0), ("miroeval", "factuality", 50.0)])
def test_an_unread_source_never_counts_as_a_failed_one(suite, metric, value):
    ev = evidence([cited("c1", SourceVerdict(A, "supported")), cited("c2", unread(B)),
                   cited("c3", SourceVerdict(A, "contradicted"))], policies={"wlc.ref_acc.denominator": "all"})
    assert rows(suite, ev)[metric].value == pytest.approx(value)


def test_checklist_carries_the_share_of_requirements_judged():
    ev = evidence([], "dr3", checklist=[1.0, None, 0.0],
                  judgment_failures={"checklist.i02": ("provider_failure", "HTTP 500")})
    row = rows("dr3", ev)["if"]
    assert row.value == 50.0 and (row.judged_share, row.unjudged_reason) == (pytest.approx(2 / 3), "provider_failure")


def test_rubric_dimensions_carry_the_share_of_criteria_scored():
    rubric = offline_rubric("How did ferry ridership change in 2023?", False)
    scores = {f"miroeval.{d.dimension_id}.{c.criterion_id}": 7.0 for d in rubric.dimensions for c in d.criteria}
    scores["miroeval.coverage.c2"] = None
    ev = evidence([], "miroeval", inputs={"miroeval.rubric": rubric}, rubric_scores=scores,
                  judgment_failures={"miroeval.coverage.c2": ("provider_failure", "HTTP 429")})
    got = {v.metric: v for v in synthesis_metrics(ev)}
    assert got["coverage"].value == 70.0 and got["coverage"].judged_share == 0.5
    assert got["coverage"].unjudged_reason == "provider_failure"
    n = sum(len(d.criteria) for d in rubric.dimensions)
    assert got["synthesis"].judged_share == pytest.approx((n - 1) / n)
    assert got["insight"].judged_share is None


def test_wlc_writing_and_gold_coverage_carry_their_judged_share():
    scores = {"wlc.well_written.c1": 1.0, "wlc.well_written.c2": None, "wlc.broad.c1": 0.0, "wlc.neutral.c1": 1.0,
              "wlc.gold.g001": 1.0, "wlc.gold.g002": None, "wlc.gold_statements.count": 4.0}
    failures = {"wlc.well_written.c2": ("pipeline_failure", "no answer"), "wlc.gold.g002": ("provider_failure", "503")}
    got = rows("wlc", evidence([], "wlc", rubric_scores=scores, judgment_failures=failures,
                               inputs={"wlc.gold_facts": 2}))
    assert got["well_written"].judged_share == 0.5 and got["broad"].judged_share is None
    assert (got["writing"].judged_share, got["writing"].unjudged_reason) == (0.75, "pipeline_failure")
    # Cov. Wiki's denominator is every gold statement: one unjudged makes it N/A (its share of the rest was
    # another number), with the failure's bucket, so the next run retries it
    assert got["cov_wiki"].value is None and got["cov_wiki"].na_reason == "provider_failure"
    assert "1 of 2 gold statements unjudged" in got["cov_wiki"].detail


def test_dr3_recall_carries_the_share_of_insights_judged():
    ev = evidence([], "dr3", inputs={"dr3.insights": {"uf": 2, "sc": 2}},
                  rubric_scores={"dr3.ir.uf.i01": 1.0, "dr3.ir.uf.i02": None,
                                 "dr3.ir.sc.i01": 1.0, "dr3.ir.sc.i02": 0.0},
                  judgment_failures={"dr3.ir.uf.i02": ("provider_failure", "HTTP 503")})
    got = rows("dr3", ev)
    assert got["ir_uf"].judged_share == 0.5 and got["ir_sc"].judged_share is None
    assert (got["ir"].judged_share, got["ir"].unjudged_reason) == (0.75, "provider_failure")


# --- who is at fault: the audit's changed cases -----------------------------------------------------------

def test_offline_process_contradiction_is_a_judge_limit_and_the_process_score_carries_7_of_8():
    tasks, reports, keys = demo_inputs()
    got = process_by_system(judge_process(keys, reports, tasks, HeuristicJudge()))["careful-scholar"]
    contradiction = got["process.contradiction"]
    assert contradiction.na_reason == "pipeline_failure" and is_judge_limit(contradiction.detail)
    assert (got["process"].judged_share, got["process"].unjudged_reason) == (7 / 8, "pipeline_failure")
    facts = {k: 0 for k in ("queries", "pages_read", "revisits", "repeated_queries", "distinct_queries",
                            "distinct_domains", "n_analyze", "n_findings", "refined_queries", "n_verify")}
    assert offline_scores({**facts, "p_to_r": None, "r_to_p": None})["contradiction"][1].startswith(JUDGE_LIMIT)


def test_a_trace_our_parser_fails_on_is_ours_a_broken_trace_the_systems(monkeypatch):
    def crash(_trace):
        raise RuntimeError("parser bug")
    monkeypatch.setattr("dreval_assets.core.traces._parse", crash)
    tasks, reports, keys = demo_inputs()
    got = process_by_system(judge_process(keys[:1], reports, tasks, HeuristicJudge()))
    (process,) = [v["process"] for v in got.values()]
    assert process.na_reason == "pipeline_failure" and "parser bug" in process.detail


def test_drb_pages_the_judge_found_unreadable_are_not_the_systems_fault():
    fact = rows("drb", evidence([cited("c1", SourceVerdict(A, "unknown"))]))["fact_accuracy"]
    assert (fact.value, fact.na_reason) == (None, "data_accessibility")


def test_wlc_statements_the_judge_found_unreadable_are_not_the_systems_fault():
    got = rows("wlc", evidence([cited("c1", SourceVerdict(A, "unknown"))]))
    assert got["ref_acc"].na_reason == "data_accessibility" and got["ref_conf"].na_reason == "data_accessibility"


def test_dr3_citation_coverage_does_not_apply_to_another_benchmarks_task():
    assert rows("dr3", evidence([], "miroeval"))["cc"].na_reason == "not_applicable"
    assert rows("dr3", evidence([], "dr3"))["cc"].na_reason == "pipeline_failure"  # a DR³ task: its sandbox is missing
