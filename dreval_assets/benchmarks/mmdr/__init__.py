"""MMDeepResearch-Bench (../shared/methods/mmdr.md): FLAE and TRACE; its release loader."""
from ..policies import Policy
from ..protocol import Benchmark
from .evidence_inputs import trace_weights
from .heuristic import HANDLERS
from .judgments import flae
from .metrics import SUITE

BENCHMARK = Benchmark("mmdr", SUITE, loader=__name__ + ".loader", report_judgments=(flae,),
                      heuristic_handlers=HANDLERS, evidence_inputs=trace_weights, policies={
    "mmdr.flae.alpha": Policy("det", ("det", "judge"), "MMDR FLAE fusion weight: alpha_det or judge-set alpha"),
})
