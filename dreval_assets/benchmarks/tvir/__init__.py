"""TVIR-Bench (../shared/methods/tvir.md): textual metrics CS, AEC, IA, WQ, ADB, FLC; the visual assessment
(FQ, MC, FCQ, FCI, CSC: visual_judgments.py, visual_scores.py); its release loader."""
from ...core import report_features
from ..protocol import Benchmark
from ..rubric import Rubric
from .heuristic import HANDLERS
from .metrics import SUITE
from .visual_judgments import visual_assessment

WRITING_QUALITY = Rubric("tvir.wq", "tvir", "Writing quality", (
    ("coherence", "coherence and organisation: a logical order, sections that build on each other"),
    ("clarity", "clarity and readability: plain sentences, terms explained"),
    ("conciseness", "conciseness: no redundancy or padding"),
    ("consistency", "stylistic and referencing consistency: one style, citations that resolve"),
), report_features.writing_quality)
ANALYTICAL_DEPTH = Rubric("tvir.adb", "tvir", "Analytical depth and breadth", (
    ("causal", "causal explanatory reasoning: why things happen, not only what"),
    ("depth", "analytical depth and development: points developed with evidence and figures"),
    ("critical", "critical evaluation: assumptions, limitations and counter-evidence weighed"),
    ("forward", "actionable, forward-looking insight: implications and recommendations"),
    ("breadth", "thematic breadth and coverage: the relevant aspects of the topic"),
), report_features.analytical_depth)

CONTRADICTIONS = Rubric("tvir.flc", "tvir", "Contradictions", (("count", "internal contradictions"),), None,
                        template="tvir/contradictions")

BENCHMARK = Benchmark("tvir", SUITE, loader=__name__ + ".loader",
                      rubrics=(WRITING_QUALITY, ANALYTICAL_DEPTH, CONTRADICTIONS), heuristic_handlers=HANDLERS,
                      report_judgments=(visual_assessment,), judge_temperature=0.0)  # the paper's GPT-5.2 at 0
