"""Offline handlers of the four live query generation templates, for the `heuristic` judge.

The handlers (`answer_persona_queries`, `answer_research_necessity`,
`answer_closed_book_answer`, `answer_answer_adequacy`) are a deterministic lexical *baseline*
(`heuristic` judge), not a language model: one question per persona it is given (`personas.py`), from
fixed patterns around the headline; necessity = the query names a figure, date, name or a run of words of its
headline; the closed-book "model" knows no recent specifics, so it restates the query's general words
and says it cannot confirm names, figures or dates; adequacy = the answer carries all the headline's
names and figures and at least half its key words.
"""
from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Mapping

from pydantic import BaseModel

from ....core.checklist_match import key_words
from .generation_models import Adequacy, ClosedBookAnswer, Necessity, PersonaQueries, PersonaQuery
from .personas import personas_for

# `background` names no specific of the headline: the necessity filter is there to drop such queries.
QUERY_PATTERNS = (
    ("specific", "I'm a {persona}. News {when} reported \"{headline}\". What led to this, what is known so far "
                 "about its scale, and what consequences should be expected for {subtopic} over the next year?"),
    ("background", "I'm a {persona}. In general terms, what shapes {subtopic}, and what are the "
                   "main long-standing debates about it?"),
    ("specific", "As a {persona}, I want to compare \"{headline}\" (reported {when}) with earlier developments "
                 "in {subtopic}: what is new about it, which sources confirm the details, and where do they "
                 "disagree?"),
    ("specific", "As a {persona}, I need a briefing on \"{headline}\" ({when}): who is affected, what have the "
                 "organisations involved said or decided, and what figures have been reported?"),
    ("background", "As a {persona}, I'd like an overview of how {subtopic} usually works: who the main actors "
                   "are, and which terms a newcomer should know."),
)

_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec").split()
_TOKEN_RE = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:[.,]\d+)*|[.!?]")
_NUMBER_RE = re.compile(r"\d+(?:[.,]\d+)*")
_SMALL = frozenset("""a an the of and or in on at to for by with from as is are was were be been it its that this
these those which who what how why when where new after over under into about amid says said will may
not no but than more most i'm""".split())


def answer_persona_queries(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`persona_queries`: one question per persona the prompt lists (`personas`, one `- role` a line),
    from a fixed pattern around the headline (its wording, date and subtopic). The pattern is the
    persona's place in its topic's row (`personas.py`), so two of a topic's five personas ask for
    general background, which the necessity filter is there to drop."""
    topic = str(variables.get("topic") or "")
    row = personas_for(topic)
    asked = listed_personas(str(variables.get("personas") or ""))
    if not asked:  # no list given: the topic's row, in turn
        asked = [row[number % len(row)] for number in range(int(variables.get("count") or 1))]
    headline = _clean_headline(str(variables["headline"]))
    values = {"headline": headline, "subtopic": str(variables.get("subtopic") or "this area"),
              "when": _when(str(variables.get("published_at") or ""))}
    queries = []
    for number, persona in enumerate(asked):
        place = row.index(persona) if persona in row else number
        _, pattern = QUERY_PATTERNS[place % len(QUERY_PATTERNS)]
        queries.append(PersonaQuery(persona=persona, query=pattern.format(persona=persona, **values)))
    return PersonaQueries(queries=queries), {"fallback": True}


def listed_personas(text: str) -> list[str]:
    """The personas of the prompt's list: lines `- role` (the generator's format)."""
    return [line[2:].strip() for line in text.splitlines() if line.startswith("- ") and line[2:].strip()]


def answer_research_necessity(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`research_necessity`: needed when the query names a figure or date of its headline (or the
    headline's publication year), a name from it, or three of its key words in a row."""
    query, headline = str(variables["query"]), _clean_headline(str(variables.get("headline") or ""))
    names = headline_names(headline, str(variables.get("description") or ""))
    year = re.match(r"\d{4}", str(variables.get("published_at") or ""))
    figures = _numbers(headline) | ({year.group()} if year else set())
    found_figures = sorted(figures & _numbers(query))
    found_names = sorted(names & _words(query))
    run = _shared_run(headline, query)
    needed = bool(found_figures or found_names or len(run) >= 3)
    if needed:
        named = [f"figures/dates {', '.join(found_figures)}" if found_figures else "",
                 f"names {', '.join(found_names)}" if found_names else "",
                 f"the event '{' '.join(run)}'" if len(run) >= 3 else ""]
        reason = "the request is about the headline's " + "; ".join(n for n in named if n)
    else:
        reason = "the request names no figure, date, name or event of the headline: general background"
    return Necessity(needs_external_sources=needed, reason=reason), {"figures": found_figures, "names": found_names}


def answer_closed_book_answer(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`closed_book_answer`: an offline model knows nothing recent; it restates the request's general
    words (no names, figures or dates) and says what it cannot confirm."""
    general = []
    for word, starts_sentence in _tokens(str(variables["query"])):
        lower = word.lower()
        if (word[0].isdigit() or lower in _SMALL or lower in _MONTHS or len(lower) < 3
                or (word[0].isupper() and not starts_sentence) or lower in general):
            continue
        general.append(lower)
    subject = ", ".join(general[:15]) or "the question asked"
    answer = (f"Without search I can only offer general background on: {subject}. I have no reliable "
              "knowledge of the recent events this request refers to, so I cannot confirm the names, "
              "figures or dates involved.")
    return ClosedBookAnswer(answer=answer), {"fallback": True}


def answer_answer_adequacy(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`answer_adequacy`: adequate when the answer carries every name and figure of the headline and at
    least half of its key words."""
    headline, answer = _clean_headline(str(variables.get("headline") or "")), str(variables["answer"])
    missing_names = sorted(headline_names(headline, str(variables.get("description") or "")) - _words(answer))
    missing_figures = sorted(_numbers(headline) - _numbers(answer))
    wanted = key_words(headline)
    share = len(wanted & key_words(answer)) / len(wanted) if wanted else 0.0
    adequate = not missing_names and not missing_figures and share >= 0.5
    reason = (f"{len(wanted & key_words(answer))} of {len(wanted)} headline key words present"
              + (f"; missing names {', '.join(missing_names)}" if missing_names else "")
              + (f"; missing figures {', '.join(missing_figures)}" if missing_figures else ""))
    return Adequacy(adequate=adequate, reason=reason), {"key_word_share": round(share, 4)}


def headline_names(headline: str, description: str = "") -> set[str]:
    """Lower-cased names of a headline: capitalised words not opening a sentence, and acronyms. In a
    Title Case headline every word is capitalised, so there only words also capitalised in the
    description (anywhere) count, plus acronyms."""
    tokens = [(w, start) for w, start in _tokens(headline) if not w[0].isdigit()]
    long_words = [w for w, _ in tokens if len(w) > 3 and w.lower() not in _SMALL]
    title_case = len(long_words) >= 3 and sum(w[0].isupper() for w in long_words) >= 0.6 * len(long_words)
    acronyms = {_plain(w) for w, _ in tokens if len(w) >= 2 and w.isupper()}
    if title_case:
        described = {_plain(w) for w, _ in _tokens(description) if w[0].isupper()}
        names = {_plain(w) for w, _ in tokens if w[0].isupper() and _plain(w) in described}
    else:
        names = {_plain(w) for w, start in tokens if w[0].isupper() and not start}
    return {n for n in names | acronyms if n not in _SMALL and n not in _MONTHS and len(n) > 1}


def _tokens(text: str) -> list[tuple[str, bool]]:
    """Words and numbers, each with whether it opens a sentence."""
    tokens, start = [], True
    for match in _TOKEN_RE.finditer(text):
        token = match.group()
        if token in ".!?":
            start = True
            continue
        tokens.append((token, start))
        start = False
    return tokens


def _plain(word: str) -> str:
    return re.sub(r"['\u2019]s$", "", word).lower().strip("'\u2019-")


def _words(text: str) -> set[str]:
    return {_plain(w) for w, _ in _tokens(text) if not w[0].isdigit()}


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "").rstrip(".") for n in _NUMBER_RE.findall(text)}


def _shared_run(headline: str, query: str) -> list[str]:
    """The longest run of consecutive headline words (small words inside allowed) found in the query
    in the same order, counted in key words."""
    words = [w.lower() for w, _ in _tokens(headline) if not w[0].isdigit()]
    query_text = " " + " ".join(w.lower() for w, _ in _tokens(query)) + " "
    best: list[str] = []
    for i in range(len(words)):
        for j in range(len(words), i, -1):
            if f" {' '.join(words[i:j])} " in query_text:
                run = [w for w in words[i:j] if w not in _SMALL]
                if len(run) > len(best):
                    best = run
                break
    return best


def _clean_headline(title: str) -> str:
    """The headline without a trailing ' - Site Name' (news APIs append it) and with plain quotes."""
    head, _, tail = title.rpartition(" - ")
    if head and len(tail.split()) <= 4:
        title = head
    return title.replace('"', "'").strip()


def _when(published_at: str) -> str:
    try:
        moment = datetime.fromisoformat(published_at.strip().replace("Z", "+00:00"))
    except ValueError:
        return "recently"
    return f"on {moment.day} {_MONTHS[moment.month - 1].capitalize()} {moment.year}"
