"""TVIR-Bench (../shared/methods/tvir.md): textual metrics CS, AEC, IA, WQ, ADB, FLC; the visual assessment
(FQ, MC, FCQ, FCI, CSC: visual_judgments.py, visual_scores.py); its release loader. Its report judgments
(judgments.py) show every text-only judge the corrected report, after caption revision, and average
the paper's three judge runs."""
from ..policies import Policy
from ..protocol import Benchmark
from .heuristic import HANDLERS
from .judgments import RUNS_POLICY, tvir_judgments
from .metrics import SUITE
from .rubrics import ANALYTICAL_DEPTH, CONTRADICTIONS, RUBRICS, WRITING_QUALITY  # noqa: F401 (named by tests)

BENCHMARK = Benchmark("tvir", SUITE, loader=__name__ + ".loader", rubrics=RUBRICS, judges_text_itself=True,
                      heuristic_handlers=HANDLERS, report_judgments=(tvir_judgments,),
                      published_tasks={"all": 100},  # it publishes no score files (nothing for verify to read)
                      judge_temperature=0.0, policies={  # the paper's judge at temperature 0
    RUNS_POLICY: Policy("3", ("1", "2", "3", "4", "5"),
                        "TVIR: runs of every TVIR judgment averaged per item (the paper: 3 runs of its judge at "
                        "temperature 0); 1 asks once, a third of the calls. The offline judge answers every run "
                        "alike and is asked once"),
})
