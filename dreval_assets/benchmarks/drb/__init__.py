"""DeepResearch Bench (../shared/methods/drb.md): RACE and FACT; its release loader."""
from ..policies import Policy
from ..protocol import Benchmark
from .heuristic import HANDLERS
from .judgments import evidence_inputs, race
from .metrics import SUITE
from .published import PUBLISHED_TASKS
from .published_checks import published_checks

BENCHMARK = Benchmark("drb", SUITE, loader=__name__ + ".loader", report_judgments=(race,),
                      published_checks=published_checks, published_tasks=PUBLISHED_TASKS,
                      heuristic_handlers=HANDLERS, evidence_inputs=evidence_inputs, policies={
    "drb.race.position_bias": Policy("target_first", ("target_first", "both_orders", "random_order"),
                                     "DRB RACE: the reference code's one call with the report first, the mean of "
                                     "both orders (two calls), or one seeded order"),
    "drb.race.seed": Policy("0", None, "DRB RACE: seed of the random order"),
    "drb.fact_accuracy.aggregate": Policy("micro", ("micro", "mean"),
                                          "DRB FACT citation accuracy across tasks: pooled supported / (supported + "
                                          "unsupported) (the paper's valid_rate), or the mean of per-task rates"),
    "drb.effective_citations.aggregate": Policy("mean_with_items", ("mean_with_items", "mean"),
                                                "DRB FACT effective citations: mean over the tasks that have "
                                                "citations (the reference code's stat.py), or over all tasks"),
})
