"""Scores a release publishes, as loaders hand them to the importer, and the checks `dreval verify`
runs over them. A loader's optional `iter_published(root, log)` yields one list of PublishedScore per
record of a published file (a CSV row, a JSONL line, a JSON cell, a .txt file): imported whole or not
at all. A benchmark's optional `published_checks(rows)` recomputes published aggregates from the
published per-item numbers with the pipeline's own formulas and yields one Check per aggregate."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class PublishedScore:
    system: str  # the release's model/run name as written (the importer slugifies it)
    task: str  # task key, or '' for a system-level aggregate
    metric: str  # our metric name where one matches, else the published name in lower case
    value: float | None  # on our metric's scale; None for a null cell
    scale: str  # the scale of `value`: '0-100', '0-1', 'count', ...
    published_metric: str  # the name exactly as in the file, or the formula of a derived row
    published_value: float | None  # the number as written
    file: str  # path relative to the release root
    line: int | None  # 1-based line / row / record number; None for whole-file values


@dataclass(frozen=True)
class Check:
    """One published number checked by `dreval verify`: an aggregate recomputed from its published
    parts, or (`identity`) a value tested against an identity the paper defines for it (a range, a
    gate, a weighted mean lying between its parts, a pass/fail taking two values): then `recomputed`
    is the nearest value the identity allows, so a value that breaks it is `difference` away.

    `in_release`: the published release itself breaks this identity in its own rows (its pipeline does
    not enforce what the paper states), so a failure is "inconsistent in the release" (listed, so a
    user knows which rows no judge could reproduce) rather than a mismatch."""

    benchmark: str
    what: str  # e.g. 'task Overall = 0.2 FLAE + 0.5 TRACE + 0.3 MOSAIC'
    system: str
    task: str  # '' for a system-level aggregate
    published: float
    recomputed: float | None  # None: not comparable (`note` says why)
    tolerance: float  # rounding allowance on the published value's scale
    note: str = ''
    identity: bool = False
    in_release: bool = False

    @property
    def matched(self) -> bool:
        return self.recomputed is not None and abs(self.published - self.recomputed) <= self.tolerance

    @property
    def difference(self) -> float | None:
        return None if self.recomputed is None else abs(self.published - self.recomputed)


def within(benchmark: str, what: str, system: str, task: str, published: float, low: float, high: float,
           tolerance: float, note: str = '', in_release: bool = False) -> Check:
    """An identity check that `published` lies in [low, high]: the nearest allowed value is recomputed."""
    nearest = min(max(published, low), high)
    bounds = f"allowed {low:.6g}-{high:.6g}" if low < high else f"allowed {low:.6g}"
    return Check(benchmark, what, system, task, published, nearest, tolerance,
                 f"{bounds}; {note}" if note else bounds, identity=True, in_release=in_release)


def all_within(benchmark: str, what: str, system: str, task: str, values: dict[str, float | None], low: float,
               high: float, tolerance: float) -> Check | None:
    """One range check over a row's scores: the value farthest outside [low, high] (else the first),
    named in the note. None for a row without a value."""
    present = {name: v for name, v in values.items() if v is not None}
    if not present:
        return None
    name, value = max(present.items(), key=lambda item: max(low - item[1], item[1] - high, 0.0))
    return within(benchmark, what, system, task, value, low, high, tolerance,
                  f"{len(present)} score(s) of the row; the farthest out: {name}")


def one_of(benchmark: str, what: str, system: str, task: str, published: float, allowed: tuple[float, ...],
           tolerance: float, note: str = '') -> Check:
    """An identity check that `published` is one of `allowed` (a pass/fail score): the nearest is recomputed."""
    nearest = min(allowed, key=lambda a: abs(published - a))
    bounds = "allowed " + " or ".join(f"{a:g}" for a in allowed)
    return Check(benchmark, what, system, task, published, nearest, tolerance,
                 f"{bounds}; {note}" if note else bounds, identity=True)


def over_tasks_present(check: Check, present: int, published_tasks: int | None) -> Check:
    """A published aggregate compared with the same aggregate over the `present` tasks of the release.
    Where the release holds fewer than the benchmark's `published_tasks`, a differing aggregate may well
    be over tasks the release does not hold: not comparable, with the counts (never a mismatch); an
    equal one is over the tasks present (a run over a subset) and matches."""
    if check.recomputed is None or check.matched or published_tasks is None or present >= published_tasks:
        return check
    return Check(check.benchmark, check.what, check.system, check.task, check.published, None, 0.0,
                 f"the release holds {present} of the benchmark's {published_tasks} tasks; the published "
                 f"aggregate differs from the one over those {present} ({check.recomputed:.6g}), so it covers tasks "
                 f"the release does not hold")


# --- cells and rounding --------------------------------------------------------------------

NULL_CELLS = {"", "null", "none", "nan", "n/a", "na"}


def cell_number(value: object) -> float | None:
    """A published cell as a number: None for an empty or null cell; ValueError for anything that is
    not a finite number (the caller skips the record whole)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isnan(number):
            return None  # JSON NaN: a null written by a numeric library
    elif isinstance(value, str):
        text = value.strip()
        if text.lower() in NULL_CELLS:
            return None
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{text[:40]!r} is not a number") from None
    else:
        raise ValueError(f"a {type(value).__name__} is not a number")
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a finite number")
    return number


def half_unit(number: float | None) -> float:
    """Half a unit of the last decimal `number` shows in its shortest form ('0.4110' shows 3: 0.0005).
    A trailing zero the file wrote is lost in the float: `Rounding` reads a column's decimals instead."""
    if number is None:
        return 0.0
    mantissa, _, exponent = repr(float(number)).lower().partition("e")
    decimals = len(mantissa.partition(".")[2].rstrip("0")) - int(exponent or 0)
    return 0.5 * 10.0 ** -decimals


FLOAT_NOISE = 1e-9  # floating-point sums of unrounded inputs


class Rounding:
    """The rounding a file's published numbers carry: half a unit of the most decimals any value of the
    same metric in the same file shows (a column written to two decimals has a value that shows them;
    54.00 alone would look like 54). A metric with a single value in its file, or with whole numbers
    only, takes the file's most decimals (a file of `Label: number` lines writes every line alike)."""

    def __init__(self, cells: Iterable[tuple[str, str, float | None]]):
        self.by_metric: dict[tuple[str, str], list[float]] = {}
        self.by_file: dict[str, float] = {}
        for file, metric, number in cells:
            if number is None or number == 0:
                continue  # 0 shows no decimals
            half = half_unit(number)
            self.by_metric.setdefault((file, metric), []).append(half)
            self.by_file[file] = min(half, self.by_file.get(file, half))

    def half(self, file: str, published_metric: str) -> float:
        halves = self.by_metric.get((file, published_metric), [])
        if len(halves) >= 2 and min(halves) < 0.5:
            return min(halves)
        # one value, or only whole numbers (a pass/fail column's "100.0" reads as 100): the file's rounding
        return self.by_file.get(file, halves[0] if halves else 0.0)
