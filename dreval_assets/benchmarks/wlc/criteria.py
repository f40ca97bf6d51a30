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

# The release ships the criteria texts (evaluation/data/wiki_writing_criteria.json); its category ids
# are matched to ours by their first word (`broad_coverage` -> broad).
RELEASE_CRITERIA_FILE = "evaluation/data/wiki_writing_criteria.json"
OUR_TEXTS = "ours"  # where a task has no release texts (live tasks): our paraphrases above


class CriteriaShapeError(ValueError):
    """The release's criteria file does not pair with our 39 criteria."""


def our_category(release_id: str) -> str | None:
    first = release_id.strip().lower().replace("-", "_").split("_")[0]
    return next((ours for ours in CATEGORIES if ours.split("_")[0] == first), None)


def release_criteria(data: object) -> dict[str, list[str]]:
    """Our category -> the release's criterion texts in its listed order (subcategories in turn),
    paired by position with our criteria. Raises CriteriaShapeError when a category is missing,
    unknown or holds another number of criteria than ours (pairing by position would then be wrong)."""
    categories = data.get("categories") if isinstance(data, dict) else None
    if not isinstance(categories, list):
        raise CriteriaShapeError("expected {categories: [...]}")
    found: dict[str, list[str]] = {}
    for category in categories:
        if not isinstance(category, dict):
            raise CriteriaShapeError("a category is not an object")
        ours = our_category(str(category.get("id") or category.get("name") or ""))
        if ours is None or ours in found:
            raise CriteriaShapeError(f"category {category.get('id')!r} is unknown or repeated")
        groups = [s.get("criteria") for s in category.get("subcategories") or [] if isinstance(s, dict)]
        groups.append(category.get("criteria") or [])
        texts = [str(c.get("text") or "").strip() for group in groups if isinstance(group, list)
                 for c in group if isinstance(c, dict)]
        if len(texts) != len(CATEGORIES[ours]) or not all(texts):
            raise CriteriaShapeError(f"category {category.get('id')!r} has {len(texts)} criteria with text, "
                                     f"ours {len(CATEGORIES[ours])}")
        found[ours] = texts
    missing = [c for c in CATEGORIES if c not in found]
    if missing:
        raise CriteriaShapeError(f"no category for {', '.join(missing)}")
    return found


def criteria_texts(shipped: dict[str, list[str]] | None) -> dict[str, list[tuple[str, str, str]]]:
    """Per category (criterion id, text shown to the judge, offline feature): the release's texts
    when the task carries them, else ours."""
    if not shipped:
        return {c: list(criteria) for c, criteria in CATEGORIES.items()}
    return {c: [(cid, text, feature) for (cid, _, feature), text in zip(criteria, shipped[c], strict=True)]
            for c, criteria in CATEGORIES.items()}
