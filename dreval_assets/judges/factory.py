"""Pick the judge named by configuration."""
from __future__ import annotations

from ..config import ConfigError
from .base import Judge
from .heuristic import HeuristicJudge


def make_judge(kind: str) -> Judge:
    if kind == "heuristic":
        return HeuristicJudge()
    if kind == "openai":
        raise ConfigError("DREVAL_JUDGE=openai: the OpenAI-compatible judge is not built yet; use heuristic")
    raise ConfigError(f"unknown judge {kind!r}")
