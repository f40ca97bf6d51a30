"""Evidence search for claims no citation decided: where else to look before saying UNKNOWN.

`EvidenceSearch` is the interface a web-search backend would implement; offline, `SandboxSearch`
looks in the task's sandbox corpus. Nothing requires a network backend.
"""
from __future__ import annotations

import re
from typing import Protocol, Sequence

from ..core.models import SandboxPage

MIN_OVERLAP = 0.3  # share of a claim's words a page must contain to be worth asking the judge
_WORD_RE = re.compile(r"[^\W_]+")


class EvidenceSearch(Protocol):
    name: str

    def search(self, claim: str, corpus: Sequence[SandboxPage], limit: int = 1) -> list[SandboxPage]:
        """Up to `limit` pages likely to decide the claim, best first."""
        ...


class SandboxSearch:
    name = "sandbox"

    def search(self, claim: str, corpus: Sequence[SandboxPage], limit: int = 1) -> list[SandboxPage]:
        words = {w.casefold() for w in _WORD_RE.findall(claim) if len(w) > 2}
        if not words:
            return []
        scored = []
        for order, page in enumerate(corpus):
            if page.text.strip():
                share = len(words & {w.casefold() for w in _WORD_RE.findall(page.text)}) / len(words)
                if share >= MIN_OVERLAP:
                    scored.append((-share, order, page))
        return [page for _, _, page in sorted(scored, key=lambda s: (s[0], s[1]))[:limit]]
