"""Wiki Live text work: a TextExtracts extract as Markdown, and the gold statements of an article
(their response model, their cleaning, and the offline `gold_statements` handler)."""
from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from pydantic import BaseModel

from ....core.dedup import content_words
from ....core.report_parser import is_checkable_fact
from ....core.sentences import split_sentences

class GoldStatements(BaseModel):
    """The gold statements of one reference article (Wiki Live fact coverage)."""

    statements: list[str]


def clean_statements(statements: Iterable[Any], cap: int | None = None) -> list[str]:
    """Stripped, one line each, exact duplicates (case and spacing) dropped, at most `cap` (None: all)."""
    kept, seen = [], set()
    for statement in statements:
        if not isinstance(statement, str):
            continue
        text = " ".join(statement.split())
        norm = text.casefold()
        if text and norm not in seen:
            seen.add(norm)
            kept.append(text)
    return kept if cap is None else kept[:cap]


def dedupe_statements(statements: list[str]) -> list[str]:
    """Near duplicates dropped (same figures, content-word overlap >= NEAR_DUPLICATE), the first kept:
    the gold of an article taken chunk by chunk states a fact of the lead and of its section once."""
    return [item[3] for item in _drop_near_duplicates([(0, i, 0, text) for i, text in enumerate(statements)])]


# -------------------------------------------------------------------------- extract -> Markdown

_HEADING_RE = re.compile(r"^(={1,6})[ \t]*(.+?)[ \t]*\1[ \t]*$")
_MD_HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*$")


def extract_to_markdown(title: str, extract: str) -> str | None:
    """The plain-text extract as Markdown: `# Title`, `== H ==` -> `## H`, `=== H ===` -> `### H`, one
    paragraph per line. Headings with nothing under them (reference lists are not in extracts) are
    dropped. None when no prose is left."""
    blocks: list[tuple[int, str]] = []  # (heading level or 0 for prose, text)
    for raw in extract.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = " ".join(raw.split())
        if not line:
            continue
        match = _HEADING_RE.match(line)
        if match:
            blocks.append((max(2, len(match.group(1))), match.group(2)))
        else:
            blocks.append((0, line))
    kept: list[tuple[int, str]] = []
    for level, text in reversed(blocks):  # a heading survives when prose or a deeper heading follows it
        if level and (not kept or (kept[-1][0] and kept[-1][0] <= level)):
            continue
        kept.append((level, text))
    kept.reverse()
    if not any(level == 0 for level, _ in kept):
        return None
    parts = [f"# {title}"] + [f"{'#' * level} {text}" if level else text for level, text in kept]
    return "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------- the offline gold statements

NAVIGATION_SECTIONS = frozenset("""see also|references|notes|footnotes|citations|sources|works cited|
bibliography|further reading|external links|notes and references|references and notes|explanatory notes|
general and cited sources|cited sources|gallery|selected works|discography|filmography""".replace("\n", "").split("|"))
MIN_WORDS, MAX_WORDS = 6, 60
NEAR_DUPLICATE = 0.85
_LIST_LINE_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")
_PRONOUN_START_RE = re.compile(r"^(?:He|She|It|They|His|Her|Its|Their|This|These|Those|The latter|The former)\b")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_FENCE_LINE_RE = re.compile(r"^(?:<<<[A-Z_]+|[A-Z_]+>>>)$")  # the prompt's quote markers around the article
_WORD_RE = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")


def answer_gold_statements(variables: Mapping[str, Any]) -> tuple[GoldStatements, dict[str, Any]]:
    """`gold_statements` offline: every sentence of the article (chunk) that states a checkable fact
    (figures, dates, named entities), cleaned and deduplicated; no cap unless `max_statements` is given."""
    statements = offline_gold_statements(str(variables.get("article") or ""), str(variables.get("title") or ""),
                                         int(variables.get("max_statements") or 0))
    return GoldStatements(statements=statements), {}


def offline_gold_statements(article: str, title: str, cap: int = 0) -> list[str]:
    """Candidates: prose sentences (navigation sections left out) of MIN..MAX words that
    `is_checkable_fact` accepts and that do not end in a colon. Near-duplicates (same numbers,
    content-word overlap >= NEAR_DUPLICATE) keep the first. Over the cap, sections take turns, each
    giving its next best sentence (more distinct figures, then more capitalised names; ties in
    document order); the result is in document order. A sentence opening with a pronoun gets the
    article's title in front ("Title: It opened in 1967."), so it can be checked on its own."""
    candidates: list[tuple[int, int, int, str]] = []  # (section, position, anchors, sentence)
    for section, paragraph in _prose_paragraphs(article):
        for sentence in split_sentences(paragraph):
            text = " ".join(sentence.split()).strip()
            words = _WORD_RE.findall(text)
            if not MIN_WORDS <= len(words) <= MAX_WORDS or text.endswith(":") or not is_checkable_fact(text):
                continue
            numbers = set(_NUMBER_RE.findall(text))
            names = sum(1 for w in words[1:] if w[0].isupper())
            candidates.append((section, len(candidates), 3 * len(numbers) + names, text))
    unique = _drop_near_duplicates(candidates)
    chosen = _spread(unique, cap)
    return [_with_subject(text, title) for _, _, _, text in chosen]


def _prose_paragraphs(article: str) -> Iterable[tuple[int, str]]:
    """(section number, paragraph) with lines wrapped inside a paragraph joined; list items stay
    separate; headings open sections, navigation sections (and their subsections) are skipped."""
    section, skip_level = 0, None
    lines: list[str] = []

    def flush() -> Iterable[tuple[int, str]]:
        if lines and skip_level is None:
            yield section, " ".join(lines)
        lines.clear()

    for raw in article.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        heading = _MD_HEADING_RE.match(line) or _HEADING_RE.match(line)
        if heading:
            yield from flush()
            level = len(heading.group(1))
            name = heading.group(2).strip(" #=").casefold()
            if skip_level is not None and level > skip_level:
                continue
            skip_level = level if name in NAVIGATION_SECTIONS else None
            section += 1
        elif not line or line.startswith(("|", "```")) or _FENCE_LINE_RE.match(line):
            yield from flush()
        elif _LIST_LINE_RE.match(line):
            yield from flush()
            lines.append(_LIST_LINE_RE.sub("", line))
            yield from flush()
        else:
            lines.append(line)
    yield from flush()


def _drop_near_duplicates(candidates: list[tuple[int, int, int, str]]) -> list[tuple[int, int, int, str]]:
    kept: list[tuple[int, int, int, str, frozenset, frozenset]] = []
    for item in candidates:
        text = item[3]
        words, numbers = content_words(text), frozenset(n.replace(",", "") for n in _NUMBER_RE.findall(text))
        duplicate = any(numbers == other_numbers and words | other_words
                        and len(words & other_words) / len(words | other_words) >= NEAR_DUPLICATE
                        for *_, other_words, other_numbers in kept)
        if not duplicate:
            kept.append((*item, words, numbers))
    return [item[:4] for item in kept]


def _spread(candidates: list[tuple[int, int, int, str]], cap: int) -> list[tuple[int, int, int, str]]:
    if cap <= 0 or len(candidates) <= cap:
        return candidates
    by_section: dict[int, list[tuple[int, int, int, str]]] = {}
    for item in candidates:
        by_section.setdefault(item[0], []).append(item)
    queues = [sorted(items, key=lambda c: (-c[2], c[1])) for _, items in sorted(by_section.items())]
    chosen: list[tuple[int, int, int, str]] = []
    while len(chosen) < cap:
        for queue in queues:
            if queue and len(chosen) < cap:
                chosen.append(queue.pop(0))
    return sorted(chosen, key=lambda c: c[1])


def _with_subject(sentence: str, title: str) -> str:
    if title and _PRONOUN_START_RE.match(sentence) and title.casefold() not in sentence.casefold():
        return f"{title}: {sentence}"
    return sentence
