"""Prompt templates live in `prompts/<name>.md` (a benchmark registered at run time may bring a folder
of its own, searched after it); a template's content hash is its version."""
from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"
_MORE_DIRS: list[Path] = []


def add_prompt_dir(folder: Path) -> None:
    """Search `folder` too, after `prompts/` (a plugin benchmark's own templates)."""
    folder = Path(folder).resolve()
    if folder not in _MORE_DIRS:
        _MORE_DIRS.append(folder)


@lru_cache(maxsize=None)
def load_template(name: str) -> tuple[str, str]:
    """Return (text, version hash) of a prompt template; unknown names raise KeyError."""
    path = next((d / f"{name}.md" for d in (PROMPTS_DIR, *_MORE_DIRS) if (d / f"{name}.md").is_file()), None)
    if path is None:
        raise KeyError(f"no prompt template {name!r} in {PROMPTS_DIR.name}/")
    text = path.read_text(encoding="utf-8")
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fence_untrusted(text: str) -> str:
    """Untrusted text (pages, reports, articles) sits between `<<<NAME` and `NAME>>>` markers in
    prompts; breaking every run of three angle brackets means it cannot close its quote early."""
    while "<<<" in text or ">>>" in text:
        text = text.replace("<<<", "<< <").replace(">>>", "> >>")
    return text


def one_line(text: str, limit: int | None = None) -> str:
    """Untrusted text that must stay on one line (a title, a URL, a statement in a list): newlines
    would let it pose as the prompt's next line or item."""
    text = " ".join(str(text).split())
    return text if limit is None else text[:limit]


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
