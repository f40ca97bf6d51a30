"""What one judge call is, for both sides of it: the request as prepared by the run's process
(`openai_judge`) and what its call came back with (`openai_calls`, in the judge worker or here)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from .base import JudgmentRequest

EXPECTED_ANSWER_TOKENS = 400  # for the tokens-per-minute estimate before a call
# An image's share of that estimate: about what a 1024-pixel image costs on common vision endpoints
# (the endpoint's own count, when it reports one, goes to the ledger's image_tokens).
ESTIMATED_IMAGE_TOKENS = 800
MESSAGE_CHARS = 500  # an error message kept in a row or the ledger: its first line, cut here
SLOTS_PER_CLIENT = 8  # concurrent requests per HTTP client (connection pool) of an endpoint


@dataclass
class PreparedCall:
    request: JudgmentRequest
    messages: list[dict[str, Any]]
    template_hash: str
    cache_key: str
    prompt_chars: int
    model: str  # the model asked: the vision model for a visual request when one is set
    max_tokens: int  # the answer's budget: a longer answer is cut off, and N/A
    temperature: float  # as sent: the user's override, else the request's (its benchmark's), else 0
    image_bytes: int = 0  # bytes of the images one request carries
    too_long: str = ""  # why the prompt is not sent: it would not fit the model's context

    @property
    def estimated_tokens(self) -> int:
        return self.prompt_chars // 4 + ESTIMATED_IMAGE_TOKENS * len(self.request.images) + min(
            self.max_tokens, EXPECTED_ANSWER_TOKENS)


@dataclass
class CallOutcome:
    answer: BaseModel | None
    na_reason: str | None = None
    error: str = ""
    attempts: int = 0  # attempts of our retry layer
    validation_retries: int = 0  # instructor's re-asks after an invalid answer, over all attempts
    tokens_in: int = 0
    tokens_out: int = 0
    image_tokens: int | None = None  # as the endpoint reports them (None: it did not)
    latency_s: float = 0.0  # the request's own time: from its turn to its end, rate-limit waits excluded
    wait_s: float = 0.0  # waiting for a concurrency slot and for the rate limiter
    rate_wait_s: float = 0.0  # of which for the rate limiter
    cache_hit: bool = False
    trail: list[str] = field(default_factory=list)  # what each HTTP request got, in order (the ledger shows it)

    def ledger_error(self) -> str:
        """The error, with every request's outcome when there was more than one (a recovered call too)."""
        if len(self.trail) < 2:
            return self.error
        trail = "requests: " + ", ".join(self.trail)
        return f"{self.error} [{trail}]" if self.error else trail
