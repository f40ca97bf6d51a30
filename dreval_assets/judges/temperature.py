"""A judge that stamps the sampling temperature a benchmark's protocol asks for on every request it is
given: the benchmark's own judgments get the benchmark's temperature, the shared ones (claim verdicts,
checklists, fixed rubrics) that of the task's benchmark (`request.labels["task"]`). A request that already
names one keeps it. The OpenAI-compatible judge sends the request's temperature unless the user set
DREVAL_JUDGE_TEMPERATURE; the offline judge has none. Everything else is the wrapped judge's."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable, Iterator, Mapping

from .base import ASK_NOW, Judge, Judgment, JudgmentRequest, as_taken


class WithTemperature:
    def __init__(self, judge: Judge, temperature: float | None = None,
                 by_task: Mapping[str, float | None] | None = None) -> None:
        self._judge = judge
        self._temperature = temperature  # for requests of no listed task
        self._by_task = dict(by_task or {})

    def stamped(self, request: JudgmentRequest) -> JudgmentRequest:
        if request is ASK_NOW or request.temperature is not None:
            return request
        temperature = self._by_task.get(request.labels.get("task", ""), self._temperature)
        return request if temperature is None else replace(request, temperature=temperature)

    def judge_many(self, requests: Iterable[JudgmentRequest]) -> list[Judgment]:
        return self._judge.judge_many(as_taken(self._judge, map(self.stamped, requests)))

    def judge_each(self, requests: Iterable[JudgmentRequest]) -> Iterator[Judgment]:
        """A streaming judge's answers as they come, each request stamped as it is taken."""
        return self._judge.judge_each(map(self.stamped, requests))

    def __getattr__(self, name: str) -> Any:  # judge_id, stats, source_token_budget, context_tokens, embed, ...
        found = getattr(self._judge, name)  # an AttributeError stays one: callers ask what a judge can do
        if name in REQUEST_METHODS:
            return lambda request, *args, **kwargs: found(self.stamped(request), *args, **kwargs)
        return found


REQUEST_METHODS = frozenset({"cache_key", "room_for"})  # judge methods given one request, stamped first


def with_temperature(judge: Judge, temperature: float | None = None,
                     by_task: Mapping[str, float | None] | None = None) -> Judge:
    """`judge` stamping `temperature` (or the task's, from `by_task`) on requests that name none."""
    if temperature is None and not any(t is not None for t in (by_task or {}).values()):
        return judge
    return WithTemperature(judge, temperature, by_task)  # type: ignore[return-value]
