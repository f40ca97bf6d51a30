"""Offline checklist judging: does the report cover a requirement's key words with real content?

Placeholder text ("figure to be inserted", "TBD", "图表待插入", ...) is removed first, so it cannot
satisfy an item. An item's credit is 1 when at least `FULL_COVERAGE` of its key words appear in the
report, 0.5 from `PARTIAL_COVERAGE`, else 0. Key words are English words (stop words dropped, light
stemming) and, in Chinese text, character bigrams (`core/language.han_terms`) once the instruction
words ("报告是否", "包括", ...) are dropped. A lexical baseline, labelled by the heuristic judge's id.
"""
from __future__ import annotations

import re

from .language import fold_width, han_terms, has_han
from .run_caches import run_cache

FULL_COVERAGE = 0.75
PARTIAL_COVERAGE = 0.45
# A placeholder ("figure to be inserted", TBD, 待补充 ...) voids the sentence (line) it stands in. The
# anchors are found first and each cut out to its sentence's ends: a pattern that starts with
# `[^.\n]*` would be tried from every position of the report (quadratic; ~80 ms per report).
_PLACEHOLDER_RE = re.compile(
    r"\b(?:figure|chart|table|image|diagram)s? (?:to be|will be) (?:inserted|added|included)"
    r"|\b(?:TBD|TODO|lorem ipsum|placeholder|coming soon)\b"
    r"|\binsert (?:a |the )?(?:figure|chart|table|image) here\b"
    r"|待补充|待插入|待添加|此处插入|占位", re.I)
_SENTENCE_END = ".\n。"
_WORD_RE = re.compile(r"[a-z0-9]+")
_STOP = frozenset("""a an the of and or in on at to for by with from as is are was were be been it its that this
these those which who what how why when where does do should must include includes including report
discuss discusses describe describes explain explains provide provides give gives identify list whether
any all each their there about into over under between within than then also more most such other""".split())


# The Chinese counterparts of the English stop list's instruction words.
_CHINESE_STOP_RE = re.compile("|".join(sorted("""报告 是否 请 包括 包含 提供 说明 描述 解释 讨论 列出 给出 指出 明确
分析 介绍 需要 应该 应当 必须 哪些 什么 如何 为什么 以及 或者 并且 相关 进行 对于 关于 其中 以下 所有 每个 任何""".split(),
                                              key=len, reverse=True)))


def key_words(text: str) -> set[str]:
    words = {_stem(w) for w in _WORD_RE.findall(text.lower()) if len(w) > 2 and w not in _STOP}
    if has_han(text):
        words |= set(han_terms(_CHINESE_STOP_RE.sub(" ", fold_width(text))))
    return words


def _stem(word: str) -> str:
    for suffix, replacement in (("ies", "y"), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + replacement
    return word


def without_placeholders(report: str) -> str:
    """The report with every sentence (or line) holding a placeholder blanked."""
    cuts, end = [], 0
    for match in _PLACEHOLDER_RE.finditer(report):
        if match.start() < end:
            continue
        start = max(report.rfind(c, 0, match.start()) for c in _SENTENCE_END) + 1
        ends = [i for i in (report.find(c, match.end()) for c in _SENTENCE_END) if i >= 0]
        end = min(ends) if ends else len(report)
        cuts.append((start, end))
    if not cuts:
        return report
    pieces, last = [], 0
    for start, stop in cuts:
        pieces += [report[last:start], " "]
        last = stop
    return "".join(pieces + [report[last:]])


@run_cache(maxsize=64)
def _report_words(report: str) -> frozenset[str]:
    """Key words of a report, placeholders left out (every checklist item reads the same report)."""
    return frozenset(key_words(without_placeholders(report)))


def item_credit(item: str, report: str) -> tuple[float, str]:
    wanted = key_words(item)
    if not wanted:
        return 0.0, "the requirement has no key words to look for"
    present = _report_words(report)
    found = wanted & present
    coverage = len(found) / len(wanted)
    credit = 1.0 if coverage >= FULL_COVERAGE else 0.5 if coverage >= PARTIAL_COVERAGE else 0.0
    missing = ", ".join(sorted(wanted - found)[:5])
    return credit, f"{len(found)} of {len(wanted)} key words present" + (f"; missing: {missing}" if missing else "")
