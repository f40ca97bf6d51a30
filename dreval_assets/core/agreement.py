"""How far two evaluators agree on the same items (../shared/methods/README.md, "Agreement metrics").

Every statistic returns a `Stat`: a value, or None with the reason it cannot be computed (too few
items, a constant series). A correlation that cannot be computed is unknown, never 0.
Ties are exact equality: callers round away float noise first.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import sqrt
from typing import Mapping, Sequence

# With two points every correlation is +1 or -1 whatever the scores: it tells nothing.
MIN_POINTS = 3


@dataclass(frozen=True)
class Stat:
    value: float | None
    note: str = ""  # why value is None


@dataclass(frozen=True)
class PairCount:
    """Pairwise agreement: how many system pairs were compared and how many agreed."""
    agreed: int
    compared: int

    @property
    def rate(self) -> Stat:
        if not self.compared:
            return Stat(None, "no task has two systems scored by both evaluators")
        return Stat(self.agreed / self.compared)


def pearson(xs: Sequence[float], ys: Sequence[float], unit: str = "item") -> Stat:
    """Pearson's r over paired values (`unit` names them in the note)."""
    unusable = _unusable(xs, ys, unit)
    if unusable:
        return Stat(None, unusable)
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return Stat(_clamp(sxy / sqrt(sxx * syy)))


def spearman(xs: Sequence[float], ys: Sequence[float], unit: str = "item") -> Stat:
    """Spearman's rho: Pearson's r of the ranks, tied values sharing their mean rank."""
    unusable = _unusable(xs, ys, unit)
    if unusable:
        return Stat(None, unusable)
    return pearson(average_ranks(xs), average_ranks(ys))


def kendall_tau_b(xs: Sequence[float], ys: Sequence[float], unit: str = "item") -> Stat:
    """Kendall's tau-b, which discounts tied pairs: (concordant - discordant) / sqrt((n0 - tx)(n0 - ty)).

    Counted in O(n log n) (Knight's method): sort by (x, y); the discordant pairs are the swaps a
    merge sort of the y sequence makes."""
    unusable = _unusable(xs, ys, unit)
    if unusable:
        return Stat(None, unusable)
    pairs = sorted(zip(xs, ys))
    n0 = len(pairs) * (len(pairs) - 1) // 2
    tied_x = _tied_pairs([x for x, _ in pairs])
    tied_xy = _tied_pairs(pairs)
    ys_by_x = [y for _, y in pairs]
    discordant = _merge_sort_swaps(ys_by_x)  # sorts ys_by_x in place
    tied_y = _tied_pairs(ys_by_x)
    concordant_minus_discordant = n0 - tied_x - tied_y + tied_xy - 2 * discordant
    return Stat(_clamp(concordant_minus_discordant / sqrt((n0 - tied_x) * (n0 - tied_y))))


def pairwise_agreement(by_task: Mapping[str, Mapping[str, tuple[float, float]]]) -> PairCount:
    """PAR's counts: for every task and every unordered pair of systems both evaluators scored on it,
    whether the two prefer the same system; a tie is its own outcome (tie and tie agree, tie and a
    preference do not). `by_task`: task -> system -> (ours, theirs)."""
    agreed = compared = 0
    for scored in by_task.values():
        for (a_ours, a_theirs), (b_ours, b_theirs) in combinations(scored.values(), 2):
            compared += 1
            agreed += _sign(a_ours - b_ours) == _sign(a_theirs - b_theirs)
    return PairCount(agreed, compared)


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ascending; equal values share the mean of the ranks they span."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start:end + 1]:
            ranks[i] = (start + end) / 2 + 1
        start = end + 1
    return ranks


def _unusable(xs: Sequence[float], ys: Sequence[float], unit: str) -> str:
    """Why a correlation of these series cannot be computed, or '' when it can."""
    if len(xs) != len(ys):
        raise ValueError(f"paired series differ in length: {len(xs)} and {len(ys)}")
    if len(xs) < MIN_POINTS:
        return f"{len(xs)} {unit}(s); a correlation needs at least {MIN_POINTS}"
    constant = [name for name, series in (("ours", xs), ("published", ys)) if len(set(series)) == 1]
    if constant:
        return f"{' and '.join(constant)} constant over {len(xs)} {unit}s"
    return ""


def _tied_pairs(values: Sequence) -> int:
    """Pairs of equal values in a sorted sequence."""
    total = run = 0
    for i in range(1, len(values) + 1):
        if i < len(values) and values[i] == values[i - 1]:
            run += 1
        else:
            total += run * (run + 1) // 2
            run = 0
    return total


def _merge_sort_swaps(values: list[float]) -> int:
    """Sorts `values` in place; returns how many pairs were out of order (strictly greater first)."""
    if len(values) < 2:
        return 0
    middle = len(values) // 2
    left, right = values[:middle], values[middle:]
    swaps = _merge_sort_swaps(left) + _merge_sort_swaps(right)
    i = j = 0
    for k in range(len(values)):
        if j == len(right) or (i < len(left) and left[i] <= right[j]):
            values[k] = left[i]
            i += 1
        else:
            values[k] = right[j]
            swaps += len(left) - i  # every left value still waiting is greater than this right one
            j += 1
    return swaps


def _sign(x: float) -> int:
    return (x > 0) - (x < 0)


def _clamp(r: float) -> float:
    """Rounding can push a perfect correlation a hair past 1."""
    return max(-1.0, min(1.0, r))
