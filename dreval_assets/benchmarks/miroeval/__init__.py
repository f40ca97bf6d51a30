"""MiroEval (../shared/methods/miroeval.md): adaptive synthesis and agentic factuality; its release loader."""
from ..policies import Policy
from ..protocol import Benchmark
from .heuristic import HANDLERS
from .judgments import synthesis
from .metrics import SUITE

BENCHMARK = Benchmark("miroeval", SUITE, loader=__name__ + ".loader", needs_sandbox_evidence=True,
                      report_judgments=(synthesis,), heuristic_handlers=HANDLERS, policies={
    "miroeval.partial": Policy("UNKNOWN", ("UNKNOWN", "RIGHT"), "MiroEval: a partially supported statement's label"),
})
