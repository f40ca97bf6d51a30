"""What an offline handler may read: the languages each kind of measurement works in, and the N/A a
handler raises for a text outside them (benchmark handlers use it as the judge's own do)."""
from __future__ import annotations

from ..core.language import detect_language
from ..core.models import ChecklistJudgment, ItemCredit


READS_OVERLAP = frozenset({"en", "latn", "zh"})  # word or bigram overlap weighted by rarity, and numbers


READS_KEY_WORDS = frozenset({"en", "zh"})  # key words after English or Chinese stop lists


READS_WORD_LISTS = frozenset({"en"})  # English word lists (causal, critical, words to watch) and units


class NotRead(Exception):
    """A text in a language the handler does not read, or an image it cannot see: the answer is N/A
    `pipeline_failure`, marked as the judge's limit (ours, never the system's)."""


def credit_items(reads: frozenset[str], items, text: str, credit, roles: tuple[str, str],
                 reason_chars: int | None = None):
    """The offline answer to an item-list template (checklist requirements, gold insights): every item
    and the text must be readable (`roles` names them in the refusal: item, text), then each item gets
    `credit(item_text, text) -> (1 / 0.5 / 0, reason)`, its reason cut at `reason_chars` (None: whole)."""
    item_role, text_role = roles
    require_readable(reads, **{text_role: text})
    for item in items:
        require_readable(reads, **{item_role: str(item["text"]), text_role: text})
    credits = []
    for item in items:
        value, reason = credit(str(item["text"]), text)
        credits.append(ItemCredit(item_id=item["item_id"], credit=value, reason=reason[:reason_chars]))
    return ChecklistJudgment(items=credits)


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
