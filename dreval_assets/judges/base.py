"""The judge protocol: a judgment request in, a parsed answer plus provenance out."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from pydantic import BaseModel

from ..core.models import NaReason


@dataclass(frozen=True)
class JudgmentRequest:
    template: str  # a prompt file `prompts/<template>.md`
    variables: Mapping[str, Any]
    response_model: type[BaseModel]


@dataclass
class Provenance:
    judge_id: str  # model name or `heuristic-vN`
    template: str
    template_hash: str
    model: str = ""
    temperature: float | None = None
    seed: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    latency_s: float = 0.0
    cache_hit: bool = False
    cache_key: str = ""


@dataclass
class Judgment:
    """`answer` is None exactly when the judgment is N/A; then `na_reason` says why."""

    answer: BaseModel | None
    provenance: Provenance
    na_reason: NaReason | None = None
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class Judge(Protocol):
    judge_id: str

    def judge_many(self, requests: Sequence[JudgmentRequest]) -> list[Judgment]:
        """Answer every request, in order. Never raises for one bad item: returns N/A instead."""
        ...
