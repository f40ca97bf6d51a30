"""What an offline handler may read: the languages each kind of measurement works in, and the N/A a
handler raises for a text outside them (benchmark handlers use it as the judge's own do)."""
from __future__ import annotations

from ..core.language import detect_language


READS_OVERLAP = frozenset({"en", "latn", "zh"})  # word or bigram overlap weighted by rarity, and numbers


READS_KEY_WORDS = frozenset({"en", "zh"})  # key words after English or Chinese stop lists


READS_WORD_LISTS = frozenset({"en"})  # English word lists (causal, critical, words to watch) and units


class NotRead(Exception):
    """A text is in a language the handler does not read: the answer is N/A `model_failure`."""


def require_readable(reads: frozenset[str], **texts: str) -> None:
    """Raise NotRead when one of the texts is in a language outside `reads`, or when they are in
    different scripts (a Chinese claim against an English page: no overlap to measure)."""
    found = {}
    for role, text in texts.items():
        language = detect_language(text)
        if language is None:  # too few letters to tell: nothing to object to
            continue
        if language.code not in reads:
            raise NotRead(f"heuristic judge does not read {language.label}")
        found[role] = language
    if len({language.script for language in found.values()}) > 1:
        shown = ", ".join(f"{role.replace('_', ' ')} in {language.label}" for role, language in found.items())
        raise NotRead(f"heuristic judge does not compare texts across languages ({shown})")
