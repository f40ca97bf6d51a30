"""MMDeepResearch-Bench (../shared/methods/mmdr.md): FLAE and TRACE; its release loader."""
from ..policies import Policy
from ..protocol import Benchmark
from .metrics import SUITE

BENCHMARK = Benchmark("mmdr", SUITE, loader=__name__ + ".loader", policies={
    "mmdr.flae.alpha": Policy("det", ("det", "judge"), "MMDR FLAE fusion weight: alpha_det or judge-set alpha"),
})
