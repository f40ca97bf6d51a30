"""A toy benchmark that lives only in the tests: one judged metric, one release loader and a live
refresh, declared in this folder and registered by the test that uses it, with no edit to any other file. It proves the
house is open: a new benchmark is a folder and a `register` call."""
from pathlib import Path

from dreval_assets.benchmarks.protocol import Benchmark, LiveRefresh

from .heuristic import HANDLERS
from .judgments import focus
from .metrics import SUITE

BENCHMARK = Benchmark("toy", SUITE, loader=__name__ + ".loader", report_judgments=(focus,),
                      heuristic_handlers=HANDLERS, prompts_dir=Path(__file__).parent / "prompts",
                      live=LiveRefresh(__name__ + ".live", "0 6 * * *"))
