"""TVIR's fixed rubrics (../shared/methods/tvir.md, "Textual assessment"): WQ's four and ADB's five
dimensions, each with its own template carrying the full rubric (what each dimension asks and its
score bands), and FLC's count of internal contradictions. Judged by TVIR's own report judgment on the
corrected report (`judgments.py`), never by the shared `rubric_scores` template."""
from ...core import report_features
from ..rubric import Rubric

WRITING_QUALITY = Rubric("tvir.wq", "tvir", "Writing quality", (
    ("coherence", "coherence and organisation"),
    ("clarity", "clarity and readability"),
    ("conciseness", "conciseness and redundancy"),
    ("consistency", "stylistic and referencing consistency"),
), report_features.writing_quality, template="tvir/writing_quality")
ANALYTICAL_DEPTH = Rubric("tvir.adb", "tvir", "Analytical depth and breadth", (
    ("causal", "causal explanatory reasoning"),
    ("depth", "analytical depth and development"),
    ("critical", "critical evaluation and assumptions"),
    ("forward", "actionable, forward-looking insight"),
    ("breadth", "thematic breadth and coverage"),
), report_features.analytical_depth, template="tvir/analytical_depth")
CONTRADICTIONS = Rubric("tvir.flc", "tvir", "Contradictions", (("count", "internal contradictions"),), None,
                        template="tvir/contradictions")

SCORED = (WRITING_QUALITY, ANALYTICAL_DEPTH)  # 1-10 per dimension (RubricScores)
RUBRICS = (*SCORED, CONTRADICTIONS)
