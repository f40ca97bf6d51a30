"""The toy suite: `focus`, how much of the request's vocabulary the report uses, as the judge rates it."""
from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.suite import MetricSpec, Suite, judgment_failure
from dreval_assets.core.metrics import MetricValue, not_available


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    score = evidence.rubric("toy.focus").get("score")
    if score is None:
        bucket, why = judgment_failure(evidence, "toy.focus", "focus was not judged", "pipeline_failure")
        return [not_available("toy", "focus", "0-100", bucket, why, evidence.judge)]
    return [MetricValue("toy", "focus", 10 * score, "0-100", 1, policy="judge score 0-10, x10", judge=evidence.judge)]


SUITE = Suite("toy", "Toy benchmark", (MetricSpec("focus", "0-100", True, "the request's vocabulary in the report"),),
              compute, headline=("focus",))
