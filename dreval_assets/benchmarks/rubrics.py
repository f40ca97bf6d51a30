"""Fixed rubrics of the benchmarks (dimension ids, names and what they ask) and which suite uses them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..core import report_features


@dataclass(frozen=True)
class Rubric:
    rubric_id: str  # e.g. "tvir.wq"
    suite: str
    title: str
    dimensions: tuple[tuple[str, str], ...]  # (id, what it asks)
    measure: Callable[[str], dict[str, float]]  # the offline judge's measurement, 1-10 per dimension


RUBRICS = (
    Rubric("tvir.wq", "tvir", "Writing quality", (
        ("coherence", "coherence and organisation: a logical order, sections that build on each other"),
        ("clarity", "clarity and readability: plain sentences, terms explained"),
        ("conciseness", "conciseness: no redundancy or padding"),
        ("consistency", "stylistic and referencing consistency: one style, citations that resolve"),
    ), report_features.writing_quality),
    Rubric("tvir.adb", "tvir", "Analytical depth and breadth", (
        ("causal", "causal explanatory reasoning: why things happen, not only what"),
        ("depth", "analytical depth and development: points developed with evidence and figures"),
        ("critical", "critical evaluation: assumptions, limitations and counter-evidence weighed"),
        ("forward", "actionable, forward-looking insight: implications and recommendations"),
        ("breadth", "thematic breadth and coverage: the relevant aspects of the topic"),
    ), report_features.analytical_depth),
    Rubric("dr3.dq", "dr3", "Depth quality", (
        ("depth", "analytical substance and logical rigour, given the query"),
    ), report_features.depth_quality),
)


def rubrics_for(suite_names: set[str]) -> list[Rubric]:
    return [r for r in RUBRICS if r.suite in suite_names]
