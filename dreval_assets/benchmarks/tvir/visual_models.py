"""TVIR's visual assessment: what is judged (checks and dimensions, from ../shared/methods/tvir.md)
and the answers its five templates ask for. Shared by the judgments, the offline handlers and the
scores, so item ids and prompts name the same things."""
from __future__ import annotations

from pydantic import BaseModel, Field

PREFIX = "tvir_visual"  # report_judgments item ids `tvir_visual.<part>...`, read back by the suite

CHART_CHECKS_TEMPLATE = "tvir/chart_checks"
COMPOSITION_TEMPLATE = "tvir/composition"
CAPTION_TEMPLATE = "tvir/caption_quality"
INTEGRATION_TEMPLATE = "tvir/figure_integration"
CHART_SOURCE_TEMPLATE = "tvir/chart_source"

CHART_KINDS = frozenset({"chart"})  # judged by the chart checklist (CQ); photos, diagrams, table images by IQ
# Photo or chart is decided by the image, not the caption's words: a drawn graphic has a flat background
# (core/images.background_share; ours, measured: the demo's charts 0.68-0.75, its photos under 0.07).
DRAWN_SHARE = 0.4
REVISION_AT_OR_BELOW = 6  # a caption dimension scored this low or lower gets a revised caption (paper)

CHART_CHECKS = (
    ("no_overlap", "no overlap: labels, legends, data marks and annotations do not cover each other"),
    ("no_misalignment", "no misalignment: axes, ticks, bars and labels line up with what they belong to"),
    ("complete_visibility", "complete visibility: nothing is cut off at the edges or hidden"),
    ("balanced_composition", "balanced composition: the plot uses its area, without large empty or crowded parts"),
    ("text_proportion", "text-to-chart proportion: titles and labels are sized in proportion to the plot"),
    ("readable_contrast", "readable contrast and distinguishable series: colours and markers tell series apart"),
    ("correct_text", "correct text rendering: no garbled characters, missing glyphs or boxes"),
    ("no_excess_decoration", "no excessive decoration: no ornament that carries no information"),
    ("no_overload", "no information overload: not more series, categories or labels than can be read"),
    ("no_redundant_labels", "no redundant labels: no value or label repeated without need"),
)
COMPOSITION_DIMENSIONS = (
    ("layout", "layout and quantity appropriateness: figures where the argument needs them, neither too few "
               "for the material nor so many that they crowd the text"),
    ("variety", "variety and richness: different source types (own charts, photographs, diagrams, tables) and "
                "chart types, each chosen to fit its topic"),
)
CAPTION_DIMENSIONS = (
    ("accuracy", "visual accuracy: everything the caption says is what the figure shows"),
    ("necessity", "minimum necessary information: what, where, when, units and source, without padding"),
    ("clarity", "clarity and readability: one clear, well-formed description"),
)
INTEGRATION_DIMENSIONS = (
    ("relevance", "contextual relevance: the figure belongs to what the surrounding text discusses"),
    ("coherence", "narrative coherence: the text introduces, refers to or interprets the figure"),
    ("value", "visual information value: the figure adds something the text alone does not give"),
)


class ChartChecks(BaseModel):
    """TVIR chart quality: ten binary checks of one chart image (true: the chart passes)."""

    no_overlap: bool
    no_misalignment: bool
    complete_visibility: bool
    balanced_composition: bool
    text_proportion: bool
    readable_contrast: bool
    correct_text: bool
    no_excess_decoration: bool
    no_overload: bool
    no_redundant_labels: bool
    problems: str = ""  # what failed, briefly


class Dimension(BaseModel):
    score: int = Field(ge=1, le=10)
    reason: str = ""


class CompositionScores(BaseModel):
    """TVIR multimodal composition of one report, on its text form."""

    layout: Dimension
    variety: Dimension


class CaptionQuality(BaseModel):
    """TVIR caption quality of one figure, with a revised caption when a dimension is 6 or lower."""

    accuracy: Dimension
    necessity: Dimension
    clarity: Dimension
    revised_caption: str = ""


class FigureIntegration(BaseModel):
    """TVIR figure-context integration of one figure in the text around it."""

    relevance: Dimension
    coherence: Dimension
    value: Dimension


class Contradiction(BaseModel):
    chart_shows: str
    source_says: str
    source: int  # the citation index of the source


class ChartSourceCheck(BaseModel):
    """TVIR chart-source consistency: the distinct contradictions between one chart and its sources."""

    contradictions: list[Contradiction] = Field(default_factory=list, max_length=40)
    reason: str = ""
