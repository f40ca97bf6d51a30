"""trace_steps: each report's research trace as steps (core/traces.py), queryable in SQL."""
from __future__ import annotations

import polars as pl

from ..core.traces import parse_trace
from .frames import frame


def trace_step_rows(reports: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int]]:
    """One row per step of every report's trace (none for a report without a trace or with an empty
    or unreadable one), and counts: traces, steps, traces with warnings, unreadable traces."""
    rows, counts = [], {"traces": 0, "steps": 0, "with_warnings": 0, "no_steps": 0}
    for r in reports.iter_rows(named=True):
        if r.get("trace") is None:
            continue
        parsed = parse_trace(r["trace"])
        counts["traces"] += 1
        counts["steps"] += len(parsed.steps)
        counts["with_warnings"] += bool(parsed.warnings)
        counts["no_steps"] += not parsed.steps
        rows += [{"system": r["system"], "task": r["task"], "step": s.index, "kind": s.kind, "text": s.text,
                  "queries": s.queries, "urls": s.urls, "depends_on": s.depends_on, "shape": parsed.shape,
                  "warnings": parsed.warnings} for s in parsed.steps]
    return frame("trace_steps", rows), counts
