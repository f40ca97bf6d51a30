"""The 39 Wiki Live writing criteria (3 Good Article categories), in our own words after Wikipedia's
public guidelines, each with the text feature the offline judge compares."""
from __future__ import annotations

# (criterion id, what it asks, offline feature)
WELL_WRITTEN = (
    ("encyclopedic", "written for a general reader in encyclopedic, not specialist, style", "clarity"),
    ("no_oversimplification", "explains without misleading simplifications; little unexplained jargon", "jargon"),
    ("self_contained", "understandable on its own, without outside context", "clarity"),
    ("lead_summary", "the lead is a concise summary and is not split into sections", "lead"),
    ("lead_nutshell", "the lead gives the basics in a nutshell without teasing", "lead"),
    ("lead_neutral", "the lead is clear and neutral in style", "opinion"),
    ("lead_stands_alone", "the lead identifies the topic, context, notability, key points and controversies", "lead"),
    ("lead_proportion", "emphasis in the lead is proportional to importance", "lead"),
    ("lead_sourced", "the lead is sourced as appropriate", "citations"),
    ("lead_no_new_info", "nothing appears only in the lead", "lead"),
    ("puffery", "no puffery or promotional language", "puffery"),
    ("contentious_labels", "no contentious labels", "contentious"),
    ("unsupported_attributions", "no vague or unsupported attributions", "weasel"),
    ("expressions_of_doubt", "no loaded expressions of doubt", "doubt"),
    ("editorializing", "no editorializing", "editorializing"),
    ("said_synonyms", "neutral verbs for what people said", "said"),
    ("euphemisms", "no euphemisms", "euphemisms"),
    ("cliches", "no cliches or idioms", "cliches"),
    ("relative_time", "no relative time references that will date", "relative_time"),
    ("unspecified_places", "no unspecified places or events", "unspecified"),
    ("survived_by", "no obituary phrasing such as 'survived by'", "survived_by"),
)
BROAD = (
    ("main_aspects", "addresses the main aspects of the topic", "breadth"),
    ("lead_scope", "the lead states the scope of the article", "lead"),
    ("notable_material", "covers all notable in-scope material at least in summary", "breadth"),
    ("out_of_scope", "leaves out out-of-scope material", "focus"),
    ("focused", "stays focused without unnecessary detail", "focus"),
    ("lead_important_points", "the lead summarises the most important points", "lead"),
    ("subtopic_sections", "each major subtopic has its own section", "sections"),
    ("no_irrelevant", "no irrelevant or loosely relevant information", "focus"),
)
NEUTRAL = (
    ("due_weight", "represents views fairly with due weight", "opinion"),
    ("opinions_not_facts", "does not state opinions as facts", "opinion"),
    ("contested_not_facts", "does not state contested assertions as facts", "weasel"),
    ("facts_not_opinions", "does not state uncontested facts as opinions", "doubt"),
    ("nonjudgmental", "uses nonjudgmental language", "editorializing"),
    ("prominence", "gives opposing views their relative prominence", "opinion"),
    ("minor_aspects", "gives no undue weight to minor aspects", "focus"),
    ("fringe", "marks fringe views as such", "opinion"),
    ("beliefs", "covers beliefs with how they developed", "breadth"),
    ("titles", "titles do not combine alternative names", "clarity"),
)
CATEGORIES = {"well_written": WELL_WRITTEN, "broad": BROAD, "neutral": NEUTRAL}
assert sum(len(c) for c in CATEGORIES.values()) == 39
