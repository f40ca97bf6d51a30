"""Scores a release publishes, as loaders hand them to the importer, and the checks `dreval verify`
runs over them. A loader's optional `iter_published(root, log)` yields one list of PublishedScore per
record of a published file (a CSV row, a JSONL line, a JSON cell, a .txt file): imported whole or not
at all. A benchmark's optional `published_checks(rows)` recomputes published aggregates from the
published per-item numbers with the pipeline's own formulas and yields one Check per aggregate."""
from __future__ import annotations

from dataclasses import dataclass


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
    """One published aggregate recomputed by `dreval verify`."""

    benchmark: str
    what: str  # e.g. 'task Overall = 0.2 FLAE + 0.5 TRACE + 0.3 MOSAIC'
    system: str
    task: str  # '' for a system-level aggregate
    published: float
    recomputed: float | None  # None: not comparable (`note` says why)
    tolerance: float  # rounding allowance on the published value's scale
    note: str = ''

    @property
    def matched(self) -> bool:
        return self.recomputed is not None and abs(self.published - self.recomputed) <= self.tolerance

    @property
    def difference(self) -> float | None:
        return None if self.recomputed is None else abs(self.published - self.recomputed)
