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

import polars as pl

from ..benchmarks.suites import SUITES
from ..core.stats import bootstrap_ci, competition_ranks, mean
from .frames import frame

UNJUDGED = "none"  # the judge of metrics computed without one


def build_leaderboard(scores: pl.DataFrame) -> pl.DataFrame:
    """`scores` are metric_scores rows; judges never mix in one mean or one comparison."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    rows = []
    for (suite, metric, judge), group in scores.group_by(["suite", "metric", "judge"], maintain_order=True):
        rows.extend(_compare(suite, metric, judge, group, now))
    return frame("leaderboard", rows).sort(["suite", "metric", "judge", "system"])


def _compare(suite: str, metric: str, judge: str, group: pl.DataFrame, now: datetime) -> list[dict]:
    """The rows of one comparison: every system scored on the same metric by the same judge."""
    values: dict[str, dict[str, float]] = {}   # system -> task -> value, in row order (the CI depends on it)
    missing: dict[str, dict[str, str]] = {}    # system -> task -> N/A reason
    scale: dict[str, str] = {}
    for system, task, value, reason, row_scale in group.select("system", "task", "value", "na_reason", "scale").iter_rows():
        values.setdefault(system, {})
        missing.setdefault(system, {})
        scale.setdefault(system, row_scale)
        if value is None:
            missing[system][task] = reason or "unknown reason"
        else:
            values[system][task] = value
    compared = [s for s in values if values[s]]  # a system with nothing scored cannot narrow the others
    shared = set.intersection(*(set(values[s]) for s in compared)) if compared else set()
    union = set().union(*(values[s] for s in compared))
    shared_means = {s: mean([v for t, v in values[s].items() if t in shared]) for s in compared} if shared else {}
    direction = _direction(suite, metric)
    ranks = (competition_ranks({s: round(m, 9) for s, m in shared_means.items()}, direction > 0)
             if direction and shared_means else {})
    rows = []
    for system, scored in values.items():
        n_tasks = len(scored) + len(missing[system])
        ci = bootstrap_ci(list(scored.values()))
        rows.append({
            "system": system, "suite": suite, "metric": metric, "judge": judge, "scale": scale[system],
            "mean": mean(list(scored.values())), "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
            "n_tasks": n_tasks, "n_scored": len(scored), "coverage": len(scored) / n_tasks,
            "shared_mean": shared_means.get(system), "n_shared": len(shared), "rank": ranks.get(system),
            "coverage_note": _coverage_note(scored, missing[system], union, len(shared), len(compared), judge),
            "computed_at": now,
        })
    return rows


def _direction(suite: str, metric: str) -> int:
    """+1 higher is better, -1 lower is better, 0 not ranked: as the suite declares the metric (counts
    that describe a report rather than grade it get no rank); higher for a metric no suite declares."""
    spec = next((m for m in SUITES[suite].metrics if m.metric == metric), None) if suite in SUITES else None
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
