"""leaderboard: per system x suite x metric x judge, the mean over scored tasks with a bootstrap CI,
its coverage, and the comparison every system can fairly be ranked on: the tasks all of them scored.

A mean over N/A rows is a mean over the scored tasks only (coverage = scored / tasks), so a system
scored on 2 of 4 tasks can show a higher mean than one scored on all 4. The rank therefore uses the
shared tasks (the tasks every compared system has a score for), and a system missing tasks another
system was scored on carries a `coverage_note` saying so and why.
"""
from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from typing import Mapping

import polars as pl

from ..benchmarks.aggregation import RULES, TaskValue, aggregate, validity, validity_adjusted, weighted_values
from ..benchmarks.suites import SUITES
from ..core.stats import bootstrap_ci, competition_ranks
from .frames import frame

UNJUDGED = "none"  # the judge of metrics computed without one


def build_leaderboard(scores: pl.DataFrame, policies: Mapping[str, str] | None = None) -> pl.DataFrame:
    """`scores` are metric_scores rows; judges never mix in one mean or one comparison. Each metric
    is aggregated by its suite's rule (a policy may choose another), written on its rows."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    rows = []
    for (suite, metric, judge), group in scores.group_by(["suite", "metric", "judge"], maintain_order=True):
        rows.extend(_compare(suite, metric, judge, group, now, policies or {}))
    return frame("leaderboard", _compose(rows)).sort(["suite", "metric", "judge", "system"])


def _compose(rows: list[dict]) -> list[dict]:
    """Composites aggregated `of_parts` take the paper's formula over the system's numbers of their
    parts (a part computed without a judge is read from the `none` rows); ranked again on the
    formula over the parts' shared-task numbers. No CI: it is not a mean of task values."""
    found = {(r["system"], r["suite"], r["metric"], r["judge"]): r for r in rows}
    groups: dict[tuple[str, str, str], list[dict]] = {}
    def order(r: dict) -> int:  # a composite of composites (TVIR Overall of TA, VA) after its parts
        return [c.metric for c in SUITES[r["suite"]].composites].index(r["metric"])

    pending = [r for r in rows if r["aggregation"].startswith("of_parts") and r["suite"] in SUITES
               and SUITES[r["suite"]].composite(r["metric"]) is not None]
    for r in sorted(pending, key=order):
        composite = SUITES[r["suite"]].composite(r["metric"])
        parts = [found.get((r["system"], r["suite"], p, r["judge"])) or found.get((r["system"], r["suite"], p, UNJUDGED))
                 for p in composite.parts]
        r["mean"] = composite.formula({p: row["mean"] if row else None for p, row in zip(composite.parts, parts)})
        r["shared_mean"] = composite.formula({p: row["shared_mean"] if row else None
                                              for p, row in zip(composite.parts, parts)})
        r["ci_low"] = r["ci_high"] = None
        r["adjusted_mean"] = validity_adjusted(r["mean"], r["validity"])
        groups.setdefault((r["suite"], r["metric"], r["judge"]), []).append(r)
    for (suite, metric, _), members in groups.items():
        ranks = _ranks(suite, metric, {r["system"]: r["shared_mean"] for r in members})
        for r in members:
            r["rank"] = ranks.get(r["system"])
    return rows


def _compare(suite: str, metric: str, judge: str, group: pl.DataFrame, now: datetime,
             policies: Mapping[str, str]) -> list[dict]:
    """The rows of one comparison: every system scored on the same metric by the same judge."""
    tasks: dict[str, dict[str, TaskValue]] = {}  # system -> task -> its row, in row order (the CI depends on it)
    scale: dict[str, str] = {}
    for system, task, value, n_items, reason, row_scale in group.select(
            "system", "task", "value", "n_items", "na_reason", "scale").iter_rows():
        scale.setdefault(system, row_scale)
        tasks.setdefault(system, {})[task] = TaskValue(value, n_items or 0,
                                                       None if value is not None else reason or "unknown reason")
    rule, how = _aggregation(suite, metric, policies)
    values = {s: {t: r.value for t, r in rows.items() if r.value is not None} for s, rows in tasks.items()}
    compared = [s for s in values if values[s]]  # a system with nothing scored cannot narrow the others
    shared = set.intersection(*(set(values[s]) for s in compared)) if compared else set()
    union = set().union(*(values[s] for s in compared))
    shared_means = {s: aggregate(rule, [r for t, r in tasks[s].items() if t in shared]) for s in compared} if shared else {}
    ranks = _ranks(suite, metric, shared_means)
    rows = []
    for system, by_task in tasks.items():
        task_rows = list(by_task.values())
        pairs = weighted_values(rule, task_rows)
        ci = bootstrap_ci([v for v, _ in pairs], weights=None if rule != "micro" else [w for _, w in pairs])
        score, valid = aggregate(rule, task_rows), validity(task_rows)
        missing = {t: r.na_reason for t, r in by_task.items() if r.value is None}
        rows.append({
            "system": system, "suite": suite, "metric": metric, "judge": judge, "scale": scale[system],
            "mean": score, "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
            "n_tasks": len(task_rows), "n_scored": len(values[system]),
            "coverage": len(values[system]) / len(task_rows),
            "shared_mean": shared_means.get(system), "n_shared": len(shared), "rank": ranks.get(system),
            "coverage_note": _coverage_note(values[system], missing, union, len(shared), len(compared), judge),
            "aggregation": how, "validity": valid, "adjusted_mean": validity_adjusted(score, valid),
            "computed_at": now,
        })
    return rows


def _aggregation(suite: str, metric: str, policies: Mapping[str, str]) -> tuple[str, str]:
    """(rule, the text every row of the metric carries): the suite's rule, or its policy's choice."""
    spec = SUITES[suite].spec(metric) if suite in SUITES else None
    rule = spec.aggregation(policies) if spec else "mean"
    chosen = f" ({spec.aggregate_policy})" if spec and spec.aggregate_policy else ""
    return rule, f"{rule}{chosen}: {RULES[rule]}"


def _ranks(suite: str, metric: str, shared_means: dict[str, float | None]) -> dict[str, int]:
    """Competition ranks on the shared-task numbers, in the metric's direction; none for a metric
    that is not ranked."""
    direction = _direction(suite, metric)
    scored = {s: round(m, 9) for s, m in shared_means.items() if m is not None}
    return competition_ranks(scored, direction > 0) if direction and scored else {}


def _direction(suite: str, metric: str) -> int:
    """+1 higher is better, -1 lower is better, 0 not ranked: as the suite declares the metric (counts
    that describe a report rather than grade it get no rank); higher for a metric no suite declares."""
    spec = SUITES[suite].spec(metric) if suite in SUITES else None
    return spec.better if spec else 1


def _coverage_note(scored: dict[str, float], missing: dict[str, str], union: set[str], n_shared: int,
                   n_compared: int, judge: str) -> str:
    """Empty when the system was scored on every task any compared system was scored on; otherwise
    what it lacks, why, and what its rank rests on."""
    lacking = union - scored.keys()
    if not lacking:
        return ""
    # no row at all: the task came after the system's last run, or another judge scored it
    not_evaluated = "not evaluated" if judge == UNJUDGED else f"not evaluated by {judge}"
    reasons = Counter(missing.get(task, not_evaluated) for task in lacking)
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    if not scored:
        return f"no task scored ({why}); not ranked"
    ranked_on = (f"ranked on the {n_shared} task(s) all {n_compared} systems scored" if n_shared
                 else "no task is scored for every system, so no rank")
    return f"scored on {len(scored)} of the {len(union)} tasks other systems were scored on ({why}); {ranked_on}"
