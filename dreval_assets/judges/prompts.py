"""Prompt templates live in `prompts/<name>.md`; a template's content hash is its version."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"


@lru_cache(maxsize=None)
def load_template(name: str) -> tuple[str, str]:
    """Return (text, version hash) of a prompt template; unknown names raise KeyError."""
    path = PROMPTS_DIR / f"{name}.md"
    if not path.is_file():
        raise KeyError(f"no prompt template {name!r} in {PROMPTS_DIR.name}/")
    text = path.read_text(encoding="utf-8")
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fence_untrusted(text: str) -> str:
    """Untrusted text (pages, reports, articles) sits between `<<<NAME` and `NAME>>>` markers in
    prompts; breaking every run of three angle brackets means it cannot close its quote early."""
    while "<<<" in text or ">>>" in text:
        text = text.replace("<<<", "<< <").replace(">>>", "> >>")
    return text


def render(name: str, variables: dict) -> str:
    text, _ = load_template(name)
    return text.format(**variables)


def for_judge(text: str, budget: int | None, limit: int, cut_note: str) -> tuple[str, bool]:
    """Untrusted text as an LLM judge reads it: fenced, and cut at `limit` characters with a note
    saying so when the judge has a budget (`budget` None: the heuristic judge reads it whole).
    Returns the text and whether it was cut."""
    cut = budget is not None and len(text) > limit
    if cut:
        text = text[:limit] + f"\n[... {cut_note}: {limit} of {len(text)} characters]"
    return fence_untrusted(text), cut
