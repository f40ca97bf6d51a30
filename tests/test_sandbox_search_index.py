"""The sandbox search reads each page's words once per search object, and finds what reading them for
every claim found: the same pages, in the same order, for every claim of the demo."""
import json
import re
from pathlib import Path

from dreval_assets.core.models import SandboxPage
from dreval_assets.fetch.search import MIN_OVERLAP, SandboxSearch

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
WORD = re.compile(r"[^\W_]+")


def per_claim_search(claim: str, corpus: list[SandboxPage], limit: int) -> list[SandboxPage]:
    """The search as it was: every page tokenized again for every claim."""
    words = {w.casefold() for w in WORD.findall(claim) if len(w) > 2}
    if not words:
        return []
    scored = []
    for order, page in enumerate(corpus):
        if page.text.strip():
            share = len(words & {w.casefold() for w in WORD.findall(page.text)}) / len(words)
            if share >= MIN_OVERLAP:
                scored.append((-share, order, page))
    return [page for _, _, page in sorted(scored, key=lambda s: (s[0], s[1]))[:limit]]


def demo_corpora() -> dict[str, list[SandboxPage]]:
    corpora: dict[str, list[SandboxPage]] = {}
    for line in (DEMO / "sandbox.jsonl").read_text().splitlines():
        page = json.loads(line)
        corpora.setdefault(page.pop("task_id"), []).append(SandboxPage(**page))
    return corpora


def test_indexed_search_finds_what_per_claim_reading_found():
    corpora = demo_corpora()
    claims = [sentence for report in (DEMO / "systems").rglob("*.md")
              for sentence in re.split(r"(?<=[.!?])\s+", report.read_text()) if sentence.strip()]
    search = SandboxSearch()
    compared = found = 0
    for task, corpus in corpora.items():
        for claim in claims:
            for limit in (1, 3):
                expected = per_claim_search(claim, corpus, limit)
                assert search.search(claim, corpus, limit) == expected, (task, claim)
                compared += 1
                found += bool(expected)
    assert compared > 1000 and found > 100  # the comparison covered claims that do find pages
    # each distinct page text was read once, however many claims asked
    assert len(search._page_words) == len({p.text for c in corpora.values() for p in c if p.text.strip()})


def test_search_many_keeps_pages_and_order():
    corpus = [SandboxPage(url="https://a.example", text="The ferry carried 41,200 passengers in 2023."),
              SandboxPage(url="https://b.example", text="The ferry carried passengers; the operator added a vessel."),
              SandboxPage(url="https://c.example", text="   ")]
    outcomes = SandboxSearch().search_many(["The ferry carried 41,200 passengers in 2023.", "Unrelated words only"],
                                           [corpus, corpus])
    assert [p.url for p in outcomes[0].pages] == ["https://a.example"]
    assert outcomes[1].pages == []
