"""Every policy a user can override with DREVAL_POLICIES: where the benchmarks' peers differ, or a
method leaves a choice open. Each row of `metric_scores` writes the policy it used; an unknown name
or value is refused when the settings are read, before any run."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Policy:
    default: str
    allowed: tuple[str, ...] | None  # None: any value (seeds)
    meaning: str


POLICIES: dict[str, Policy] = {
    "dr3.fa.unknown": Policy("zero", ("zero", "exclude"), "DR³ FA: unreadable citations count as 0 or are left out"),
    "dr3.if.partial": Policy("zero", ("zero", "half"), "DR³ IF: a half-met checklist item counts 0 or 0.5"),
    "miroeval.partial": Policy("UNKNOWN", ("UNKNOWN", "RIGHT"), "MiroEval: a partially supported statement's label"),
    "wlc.ref_acc.denominator": Policy("drop_unreachable", ("drop_unreachable", "all"),
                                      "Wiki Live reference accuracy: unreachable sources left out or counted"),
    "wlc.position_bias": Policy("both_orders", ("both_orders", "random_order"),
                                "Wiki Live writing: judge both orders (win only if they agree) or one seeded order"),
    "wlc.seed": Policy("0", None, "Wiki Live writing: seed of the random order"),
    "mmdr.flae.alpha": Policy("det", ("det", "judge"), "MMDR FLAE fusion weight: alpha_det or judge-set alpha"),
    "drb.race.position_bias": Policy("both_orders", ("both_orders", "target_first", "random_order"),
                                     "DRB RACE: mean of both orders, the reference code's target-first order, "
                                     "or one seeded order"),
    "drb.race.seed": Policy("0", None, "DRB RACE: seed of the random order"),
}


def check_policies(overrides: dict[str, str]) -> None:
    """Raise ValueError naming the first unknown policy or value."""
    for name, value in overrides.items():
        policy = POLICIES.get(name)
        if policy is None:
            raise ValueError(f"unknown policy {name!r}; known: {', '.join(sorted(POLICIES))}")
        if policy.allowed is not None and value not in policy.allowed:
            raise ValueError(f"policy {name}={value!r}: choose one of {', '.join(policy.allowed)}")


def policy_value(overrides: dict[str, str], name: str) -> str:
    return overrides.get(name, POLICIES[name].default)
