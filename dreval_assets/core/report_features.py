"""Measured features of a report's text, mapped to 1-10 rubric scores for the offline judge.

Each dimension is one documented measurement on a linear scale, clipped to [1, 10]; these are a
baseline that rewards structure and explicit reasoning, not a reading of the report's quality.
"""
from __future__ import annotations

import re

from .dedup import duplicate_groups
from .models import ParsedReport
from .report_parser import parse_report
from .run_caches import run_cache

_CAUSAL = re.compile(r"\b(because|therefore|thus|hence|as a result|due to|leads? to|led to|driven by|owing to|"
                     r"which means|so that|consequently)\b", re.I)
_CRITICAL = re.compile(r"\b(however|although|but|limitation|limitations|uncertain|uncertainty|risk|risks|caveat|"
                       r"on the other hand|whereas|despite|unclear|assum\w*)\b", re.I)
_FORWARD = re.compile(r"\b(should|recommend\w*|next steps?|expect\w*|forecast\w*|will|plan\w*|priorit\w*|"
                      r"outlook|propos\w*)\b", re.I)
_NUMBER_WITH_UNIT = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(percent|%|million|billion|megawatts?|gigawatts?|"
                               r"kilometres?|cubic metres?|passengers|dollars|euros|pounds|tonnes|students|sites)",
                               re.I)
_WORD = re.compile(r"[^\W_]+")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")


@run_cache(maxsize=16)
def _parsed(report: str) -> ParsedReport:
    """One parse for the measures of one report: WQ, ADB and FLC read the same text in turn (read only)."""
    return parse_report(report)


def _scale(value: float, low: float, high: float) -> float:
    """Linear map of value from [low, high] onto [1, 10], clipped."""
    if high == low:
        return 1.0
    return round(min(10.0, max(1.0, 1 + 9 * (value - low) / (high - low))), 1)


def _per_100_sentences(pattern: re.Pattern, sentences: list[str]) -> float:
    return 100 * sum(1 for s in sentences if pattern.search(s)) / max(1, len(sentences))


def writing_quality(report: str) -> dict[str, float]:
    """TVIR WQ dimensions: coherence, clarity, conciseness, consistency."""
    parsed = _parsed(report)
    sentences = parsed.sentences or [report]
    lengths = [len(_WORD.findall(s)) for s in sentences]
    mean_length = sum(lengths) / len(lengths)
    headed = sum(1 for s in parsed.sections if s.level > 0)
    repeats = sum(1 for i, g in enumerate(duplicate_groups(sentences)) if g != i) / len(sentences)
    cited = [c for c in parsed.claims if c.kind != "uncited"]
    resolved = sum(1 for c in cited if not c.unresolved_indices) / len(cited) if cited else 0.0
    return {
        "coherence": _scale(headed, 0, 6),                      # sections that organise the text
        "clarity": _scale(-abs(mean_length - 20), -20, 0),      # sentences near 20 words read best
        "conciseness": _scale(-repeats, -0.2, 0),               # share of repeated sentences
        "consistency": _scale(resolved, 0, 1),                  # citations that resolve to a source
    }


def analytical_depth(report: str) -> dict[str, float]:
    """TVIR ADB dimensions: causal, depth, critical, forward-looking, breadth."""
    parsed = _parsed(report)
    sentences = parsed.sentences or [report]
    numbers = len(_NUMBER_WITH_UNIT.findall(report))
    distinct_terms = len({w.lower() for w in _WORD.findall(report) if len(w) > 6})
    return {
        "causal": _scale(_per_100_sentences(_CAUSAL, sentences), 0, 25),
        "depth": _scale(numbers / max(1, len(sentences)), 0, 1),   # quantified statements per sentence
        "critical": _scale(_per_100_sentences(_CRITICAL, sentences), 0, 25),
        "forward": _scale(_per_100_sentences(_FORWARD, sentences), 0, 20),
        "breadth": _scale(distinct_terms, 20, 200),
    }


def depth_quality(report: str) -> dict[str, float]:
    """DR³ DQ, one dimension: the mean of the analytical-depth measurements."""
    adb = analytical_depth(report)
    return {"depth": round(sum(adb.values()) / len(adb), 1)}


def contradiction_candidates(report: str) -> list[str]:
    """Pairs of sentences that give different numbers in the same unit about the same thing (at
    least four shared content words, the same years mentioned), e.g. two capacities of one plant in
    one year. Sentences with one number each only: a sentence comparing values is not a conflict."""
    sentences = _parsed(report).sentences
    facts = []
    for s in sentences:
        quantities = _NUMBER_WITH_UNIT.findall(s)
        if len(quantities) != 1:
            continue
        number, unit = quantities[0]
        words = {w.lower() for w in _WORD.findall(s) if len(w) > 3 and not w.isdigit()}
        facts.append((unit.lower().rstrip("s"), number.replace(",", ""), words, frozenset(_YEAR.findall(s)), s))
    found, seen = [], set()
    for i, (unit, number, words, years, sentence) in enumerate(facts):
        for unit2, number2, words2, years2, sentence2 in facts[i + 1:]:
            if (unit == unit2 and number != number2 and years == years2 and sentence != sentence2
                    and len(words & words2) >= 4):
                key = frozenset((sentence, sentence2))
                if key not in seen:
                    seen.add(key)
                    found.append(f"{number} {unit} vs {number2} {unit}: '{sentence[:80]}' / '{sentence2[:80]}'")
    return found
