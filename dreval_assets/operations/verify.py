"""`dreval verify`: recompute the aggregates a release publishes from its published per-item numbers,
with the pipeline's own formulas, test every published value against the identities the paper
defines for it, and say which hold.

Each registered benchmark that declares `published_checks` gets its `published_scores` rows and
yields one `Check` per aggregate or identity; this module only counts and words them. A check whose
published aggregate covers more than the release holds (or whose inputs are not published) is "not
comparable", never a mismatch. A value breaking an identity the release's own rows are known to break
is "inconsistent in the release": listed, not a mismatch. A mismatch is a difference beyond the check's
rounding allowance: an aggregate that does not follow from its parts, or an impossible value.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..benchmarks import registry
from ..releases.published import Check
from ..store.db import Store
from ..store.published import load_published, published_benchmarks


class NothingToVerify(ValueError):
    """No published scores are imported (for the benchmark asked)."""


@dataclass
class Verification:
    benchmark: str
    rows: int  # published scores the checks read
    checks: list[Check] = field(default_factory=list)
    declared: bool = True  # the benchmark declares published_checks

    @property
    def comparable(self) -> list[Check]:
        return [c for c in self.checks if c.recomputed is not None]

    @property
    def matched(self) -> list[Check]:
        return [c for c in self.checks if c.matched]

    @property
    def mismatched(self) -> list[Check]:
        return [c for c in self.comparable if not c.matched and not c.in_release]

    @property
    def inconsistent_in_release(self) -> list[Check]:
        return [c for c in self.comparable if not c.matched and c.in_release]

    @property
    def not_comparable(self) -> list[Check]:
        return [c for c in self.checks if c.recomputed is None]

    @property
    def largest_difference(self) -> float | None:
        differences = [c.difference for c in self.comparable if c.matched or not c.in_release]
        return max(differences) if differences else None


def verify(store: Store, benchmark: str | None = None) -> list[Verification]:
    """One Verification per benchmark with published scores (only `benchmark` when given)."""
    if benchmark is not None and benchmark not in registry.BENCHMARKS:
        raise KeyError(f"unknown benchmark {benchmark!r}; known: {', '.join(registry.BENCHMARKS)}")
    counts = published_benchmarks(store)
    names = [b for b in counts if benchmark is None or b == benchmark]
    if not names:
        what = f"for {benchmark} " if benchmark else ""
        raise NothingToVerify(f"no published scores {what}are imported: import a release that holds its score "
                              f"files first (dreval import <benchmark> <release folder>)")
    results = []
    for name in names:
        declared = registry.BENCHMARKS.get(name)
        checks_of = declared.published_checks if declared else None
        if checks_of is None:
            results.append(Verification(name, counts[name], declared=False))
            continue
        results.append(Verification(name, counts[name], list(checks_of(load_published(store, name)))))
    return results


def lines(results: list[Verification], shown: int = 30) -> list[str]:
    out = []
    for result in results:
        if not result.declared:
            out.append(f"{result.benchmark}: {result.rows} published scores; no checks declared for this benchmark")
            continue
        largest = result.largest_difference
        out.append(f"{result.benchmark}: {result.rows} published scores; checks {len(result.checks)}: "
                   f"matched {len(result.matched)}, not comparable {len(result.not_comparable)}, "
                   f"inconsistent in the release {len(result.inconsistent_in_release)}, "
                   f"mismatched {len(result.mismatched)}; largest |difference| "
                   f"{'-' if largest is None else f'{largest:.6g}'}")
        for check in result.mismatched[:shown]:
            out.append(f"  {'IMPOSSIBLE' if check.identity else 'MISMATCH'} {_where(check)}: {check.what}: "
                       f"published {check.published:.6g}, {_recomputed(check)} (difference {check.difference:.3g}, "
                       f"allowed {check.tolerance:.3g})" + (f"; {check.note}" if check.note else ""))
        if len(result.mismatched) > shown:
            out.append(f"  ... {len(result.mismatched) - shown} more mismatches")
        for check in result.inconsistent_in_release[:shown]:
            out.append(f"  inconsistent in the release: {_where(check)}: {check.what}: published "
                       f"{check.published:.6g}, {_recomputed(check)}" + (f"; {check.note}" if check.note else ""))
        if len(result.inconsistent_in_release) > shown:
            out.append(f"  ... {len(result.inconsistent_in_release) - shown} more inconsistent in the release")
        for why, n in _reasons(result.not_comparable)[:shown]:
            out.append(f"  not comparable ({n}): {why}")
    return out


def _recomputed(check: Check) -> str:
    return f"{'nearest possible' if check.identity else 'recomputed'} {check.recomputed:.6g}"


def _where(check: Check) -> str:
    return f"system {check.system or '-'}, task {check.task or '(system aggregate)'}"


def _reasons(checks: list[Check]) -> list[tuple[str, int]]:
    """Not-comparable checks grouped by what they check and why, most frequent first."""
    counts: dict[str, int] = {}
    for check in checks:
        why = f"{check.what}: {check.note or 'no reason given'}"
        counts[why] = counts.get(why, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def exit_status(results: list[Verification]) -> int:
    """1 when any comparable aggregate differs beyond its allowance or a value breaks an identity
    (other than one the release itself is known to break), else 0."""
    return 1 if any(r.mismatched for r in results) else 0
