"""MMDeepResearch-Bench (../shared/methods/mmdr.md): FLAE, TRACE (with VEF) and MOSAIC; its release loader."""
from ..policies import Policy
from ..protocol import Benchmark
from .evidence_inputs import task_inputs
from .fidelity import TEMPLATES as FIDELITY_TEMPLATES
from .heuristic import HANDLERS
from .judgments import flae
from .metrics import SUITE
from .mosaic import judge_visual
from .published import PUBLISHED_TASKS
from .published_checks import published_checks
from .trace_weights import judge_trace_weights

BENCHMARK = Benchmark("mmdr", SUITE, loader=__name__ + ".loader",
                      report_judgments=(flae, judge_trace_weights, judge_visual), published_checks=published_checks,
                      published_tasks=PUBLISHED_TASKS,
                      heuristic_handlers=HANDLERS, evidence_inputs=task_inputs,
                      judge_temperature=0.2,  # the paper's judge (Gemini-2.5-Pro) sampled at 0.2
                      claim_verdict_templates=FIDELITY_TEMPLATES,  # FID: over-specificity, causal inversion
                      policies={
    "mmdr.flae.alpha": Policy("judge", ("det", "judge"), "MMDR FLAE fusion weight: the judge-set alpha (the paper's;"
                              " alpha_det when the judge sets none) or alpha_det from the observables"),
    "mmdr.trace.weights": Policy("judge", ("judge", "equal"), "MMDR TRACE weights over CON, COV, FID: set per"
                                 " report by the judge from the task and the report (the paper's; N/A when it cannot)"
                                 " or equal thirds (ours)"),
    "mmdr.flae.protocol": Policy("separate", ("separate", "single_call"), "MMDR FLAE: judge scores, task-adaptive"
                                 " weights and alpha in three prompts per report (the paper's) or in one call"),
})
