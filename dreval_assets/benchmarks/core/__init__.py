"""Our own suite `core`: claim counts and ratios every report gets, whatever its benchmark. No release."""
from ..protocol import Benchmark
from .metrics import SUITE

BENCHMARK = Benchmark("core", SUITE)
