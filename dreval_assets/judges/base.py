"""The judge protocol: a judgment request in, a parsed answer plus provenance out."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Protocol, Sequence

from pydantic import BaseModel

from ..core.models import NaReason


@dataclass(frozen=True)
class ImageInput:
    """An image a visual request shows the judge: bytes as sent (`core/images.for_judge`), their
    content hash (part of the cache key) and where they came from (for the prompt and errors)."""

    name: str
    sha256: str
    mime: str
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class JudgmentRequest:
    template: str  # a prompt file `prompts/<template>.md`
    variables: Mapping[str, Any]
    response_model: type[BaseModel]
    labels: Mapping[str, str] = field(default_factory=dict)  # run_id, asset, system, task: for the ledger only
    images: tuple[ImageInput, ...] = ()  # shown after the prompt text, in order; makes it a visual request
    answer_tokens: int | None = None  # the answer's size when the caller knows it (else from the schema)
    # text variables a judge with a smaller context may cut from the end, in this order, with a note saying
    # so, to fit its model's window (holistic reads of a long text); every other variable is never cut
    fit: tuple[str, ...] = ()
    # the sampling temperature its benchmark's protocol asks for (None: the judge's default, 0); set by
    # `judges/temperature.WithTemperature` from the benchmark's declaration, never per call site
    temperature: float | None = None
    # which of a benchmark's repeated runs of the same judgment this is (the papers that average several
    # runs): the prompt is the same, a run after the first has its own cache key
    run: int = 1


class FreeText(BaseModel):
    """The response model of a request answered in prose (a system writing its report), not JSON:
    the OpenAI-compatible client sends a plain chat completion and wraps the text."""

    text: str


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


@dataclass
class JudgeStats:
    """What a judge spent; assets report it as materialisation metadata."""

    requests: int = 0
    cache_hits: int = 0
    calls: int = 0  # requests that reached the endpoint
    failures: int = 0
    validation_retries: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = 0.0  # None once any call had no price
    image_bytes: int = 0  # image bytes sent to the endpoint

    def add_cost(self, cost: float | None) -> None:
        self.cost = None if cost is None or self.cost is None else self.cost + cost

    def metadata(self) -> dict[str, Any]:
        hit_rate = self.cache_hits / self.requests if self.requests else 0.0
        return {"judge_requests": self.requests, "judge_calls": self.calls, "judge_cache_hits": self.cache_hits,
                "judge_cache_hit_rate": round(hit_rate, 4), "judge_failures": self.failures,
                "judge_validation_retries": self.validation_retries, "judge_tokens_in": self.tokens_in,
                "judge_tokens_out": self.tokens_out, "judge_image_bytes": self.image_bytes,
                "judge_cost": "unpriced" if self.cost is None else round(self.cost, 6)}


ASK_NOW = object()
"""In a stream of requests: the ones made so far are to be sent now, the next may be a while (a streaming
judge prepares its requests in chunks, and would otherwise wait to fill one)."""


def as_taken(judge: object, requests: Iterable[JudgmentRequest]) -> Iterable[JudgmentRequest]:
    """Requests as `judge.judge_many` takes them: as they are made for a judge that takes an iterator
    (`streams_requests`: its first request leaves while the rest are made), else all made first."""
    if getattr(judge, "streams_requests", False):
        return requests
    return [request for request in requests if request is not ASK_NOW]


class Judge(Protocol):
    judge_id: str
    stats: JudgeStats
    source_token_budget: int | None  # how much of a source page fits a prompt (None: all of it)

    def judge_many(self, requests: Sequence[JudgmentRequest]) -> list[Judgment]:
        """Answer every request, in order. Never raises for one bad item: returns N/A instead."""
        ...
