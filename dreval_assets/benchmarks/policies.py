"""Every policy a user can override with DREVAL_POLICIES: where the benchmarks' peers differ, or a
method leaves a choice open. Each row of `metric_scores` writes the policy it used; an unknown name
or value is refused when the settings are read, before any run."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class Policy:
    default: str
    allowed: tuple[str, ...] | None  # None: any value (seeds)
    meaning: str


# Choices shared by every benchmark (not one benchmark's own).
SHARED_POLICIES = {
    "claims.extraction": Policy("auto", ("auto", "llm", "sentences"),
                                "what a claim is: `llm` decomposes the report into atomic statements grounded in its "
                                "sentences (the papers' protocol), `sentences` takes the parser's sentences; `auto` is "
                                "llm with an LLM judge and sentences with the offline judge"),
}


# benchmark -> its own policies, in registry order: the registry declares each benchmark it lists or
# registers (this module sits below the benchmark folders, which import it, so it never asks the registry)
_DECLARED: dict[str, dict[str, Policy]] = {}


def declare(benchmark: str, policies: Mapping[str, Policy]) -> None:
    """A benchmark's own policies (replacing what it declared before)."""
    _DECLARED[benchmark] = dict(policies)


def all_policies() -> dict[str, Policy]:
    """The shared policies and every benchmark's own, by name (each benchmark declares its own in its folder)."""
    return {**SHARED_POLICIES, **{name: policy for own in _DECLARED.values() for name, policy in own.items()}}


def check_policies(overrides: dict[str, str]) -> None:
    """Raise ValueError naming the first unknown policy or value."""
    known = all_policies()
    for name, value in overrides.items():
        policy = known.get(name)
        if policy is None:
            raise ValueError(f"unknown policy {name!r}; known: {', '.join(sorted(known))}")
        if policy.allowed is not None and value not in policy.allowed:
            raise ValueError(f"policy {name}={value!r}: choose one of {', '.join(policy.allowed)}")


def policy_value(overrides: dict[str, str], name: str) -> str:
    return overrides.get(name, all_policies()[name].default)


def policy_owner(name: str) -> str | None:
    """The benchmark that declares policy `name` (None: a shared policy, or one no longer declared)."""
    return next((benchmark for benchmark, own in _DECLARED.items() if name in own), None)


def shapes_suites(name: str, suites: "set[str] | frozenset[str]") -> bool:
    """Whether policy `name` can change the rows of a partition scored under `suites`: a shared policy
    (or one no longer declared) shapes every partition, a benchmark's own only the partitions its
    suite scores."""
    owner = policy_owner(name)
    return owner is None or owner in suites
