"""MiroEval (../shared/methods/miroeval.md): adaptive synthesis, agentic factuality and process
evaluation of the research trace; its release loader."""
from ..policies import Policy
from ..protocol import Benchmark, LiveRefresh
from .artifacts import adaptive_rubrics, evidence_inputs, image_key_facts, key_facts
from .heuristic import HANDLERS
from .judgments import synthesis
from .process_judgments import HANDLERS as PROCESS_HANDLERS, process
from .metrics import SUITE
from .published import PUBLISHED_TASKS, published_checks

BENCHMARK = Benchmark("miroeval", SUITE, loader=__name__ + ".loader", needs_sandbox_evidence=True,
                      report_judgments=(synthesis, process),
                      heuristic_handlers={**HANDLERS, **PROCESS_HANDLERS},
                      task_artifacts=(adaptive_rubrics, key_facts, image_key_facts), evidence_inputs=evidence_inputs,
                      live=LiveRefresh(__name__ + ".live.refresh", "0 5 * * 3"),  # weekly, early morning (UTC)
                      published_checks=published_checks, published_tasks=PUBLISHED_TASKS, policies={
    "miroeval.dimension_cap": Policy("none", ("none", "0.20"),
                                     "MiroEval synthesis: the judge's dimension weights as generated (the published "
                                     "protocol), or each task-specific dimension held at 0.20"),
    "miroeval.partial": Policy("UNKNOWN", ("UNKNOWN", "RIGHT"), "MiroEval: a partially supported statement's label"),
    "miroeval.factuality.aggregate": Policy("micro", ("micro", "mean", "mean_na_zero"),
                                            "MiroEval factuality across tasks: pooled counts (the paper's right ratio, "
                                            "e.g. 3,335 right of 4,001), the per-task mean skipping N/A tasks, or "
                                            "counting them 0"),
})
