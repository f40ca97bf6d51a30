"""leaderboard: per system x suite x metric x judge, the system's number by the metric's aggregation
rule with a bootstrap CI, its coverage, and the comparison every system can fairly be ranked on: the
tasks all of them scored.

A mean over N/A rows is a mean over the scored tasks only (coverage = scored / applicable tasks), so a
system scored on 2 of 4 tasks can show a higher mean than one scored on all 4. Ranks therefore go to
the systems that cover the comparison (scored on every task any system was scored on), by the number
shown: their means are over the same tasks, so a rank never contradicts the means. A system missing
tasks another was scored on is listed with its coverage, no rank, and a `coverage_note` saying what it
lacks and why; `shared_mean` compares every system on the tasks all of them scored, a column of its
own that never reorders the ranks.

Who is at fault (DESIGN): a `not_applicable` task row is no task of the metric (left out of the mean,
coverage and validity); a suite's `system_rule` may rule a metric not applicable for a whole system.
A task our judge could not judge (a "judge limit: " reason) narrows the shared tasks like any other
unscored task, and a system that has such rows and no rank is `not_comparable`: a blind judge never
decides a ranking. Composites aggregated `of_parts` are computed over the tasks on which every part
has a value (the papers average complete rows); with no such task they have no number and no rank.

Breakdowns: a suite's declared `breakdowns` (and any attribute asked for with `by`) are computed by
the same rules over the tasks of each value of a task attribute (`task_attributes`): the rows of
metric m on the tasks whose attribute is v are `<m>.<v>`, `breakdown` = `<attribute>=<v>`, ranked
among themselves. Nothing here knows which benchmark declares what.
"""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from typing import Mapping, Sequence

import polars as pl

from ..benchmarks.aggregation import RULES, TaskValue, aggregate, applicable, validity, validity_adjusted, \
    weighted_values
from ..benchmarks.suite import Breakdown
from ..benchmarks.suites import SUITES
from ..core.metrics import JUDGE_LIMIT, NOT_APPLICABLE, is_judge_limit
from ..core.stats import bootstrap_ci, competition_ranks
from .frames import frame

UNJUDGED = "none"  # the judge of metrics computed without one

Comparison = tuple[str, str, str]  # suite, metric, judge
Cells = dict[Comparison, dict[str, dict[str, TaskValue]]]  # -> system -> task -> its row, in row order


def build_leaderboard(scores: pl.DataFrame, policies: Mapping[str, str] | None = None,
                      task_attributes: Mapping[str, Mapping[str, str]] | None = None,
                      by: Sequence[str] = ()) -> pl.DataFrame:
    """`scores` are metric_scores rows; judges never mix in one mean or one comparison. Each metric
    is aggregated by its suite's rule (a policy may choose another), written on its rows. With
    `task_attributes` (task -> attribute -> value, `task_attributes()`), each suite's declared
    breakdowns and the attributes in `by` add their `<metric>.<value>` rows."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    rows = _board(scores, policies or {}, now)
    if task_attributes is not None:
        rows += _breakdown_rows(scores, policies or {}, task_attributes, by, now)
    return frame("leaderboard", rows).sort(["suite", "metric", "judge", "system"])


TASK_ATTRIBUTE_COLUMNS = "task, language, domain, modality, attributes"  # what task_attributes reads


def task_attributes(tasks: pl.DataFrame) -> dict[str, dict[str, str]]:
    """task -> attribute -> value, from `tasks` rows: the language, domain and modality columns and
    the release labels kept in `attributes` (JSON), e.g. DR³'s `set`; empty values left out."""
    found: dict[str, dict[str, str]] = {}
    for row in tasks.iter_rows(named=True):
        labels = json.loads(row.get("attributes") or "{}")
        values = {k: str(v) for k, v in labels.items() if isinstance(v, (str, int, float)) and str(v)}
        values |= {c: str(row[c]) for c in ("language", "domain", "modality") if row.get(c)}
        found[row["task"]] = values
    return found


def suite_breakdowns(suite: str, by: Sequence[str] = ()) -> list[Breakdown]:
    """The suite's declared breakdowns, then one over every metric for each other attribute in `by`."""
    declared = list(SUITES[suite].breakdowns) if suite in SUITES else []
    return declared + [Breakdown(a, ("*",)) for a in by if a not in {b.attribute for b in declared}]


def _breakdown_rows(scores: pl.DataFrame, policies: Mapping[str, str], attributes: Mapping[str, Mapping[str, str]],
                    by: Sequence[str], now: datetime) -> list[dict]:
    """Each breakdown's rows: the board of the suite's scores on the tasks of one value at a time
    (composites from their parts on those tasks), the metric renamed `<metric>.<value>`."""
    rows = []
    for suite in sorted(scores.get_column("suite").unique().to_list()):
        suite_scores = scores.filter(pl.col("suite") == suite)
        for breakdown in suite_breakdowns(suite, by):
            groups: dict[str, list[str]] = {}
            for task in suite_scores.get_column("task").unique().to_list():
                value = (attributes.get(task) or {}).get(breakdown.attribute)
                if value:
                    groups.setdefault(value, []).append(task)
            headline = SUITES[suite].headline if suite in SUITES else ()
            wanted = None if breakdown.metrics == ("*",) else set(breakdown.metrics or headline)
            for value in breakdown.values or sorted(groups):
                if value not in groups:
                    continue
                for r in _board(suite_scores.filter(pl.col("task").is_in(groups[value])), policies, now):
                    if wanted is None or r["metric"] in wanted:
                        rows.append({**r, "metric": f"{r['metric']}.{value}",
                                     "breakdown": f"{breakdown.attribute}={value}"})
    return rows


def _board(scores: pl.DataFrame, policies: Mapping[str, str], now: datetime) -> list[dict]:
    """The leaderboard rows of these scores, every comparison ranked among the systems covering it."""
    cells, scales = _cells(scores)
    ruled = _system_rules(cells)
    limited = _judge_limited(cells)
    rows = []
    for key, by_system in cells.items():
        rows.extend(_compare(key, by_system, scales, ruled, limited.get(key, {}), now, policies))
    rows = _compose(rows, cells, policies)
    for r in rows:
        r.pop("_shared", None)
    return rows


def _cells(scores: pl.DataFrame) -> tuple[Cells, dict[tuple[Comparison, str], str]]:
    """The task rows by comparison and system, and each system's scale there (its first row's)."""
    cells: Cells = {}
    scales: dict[tuple[Comparison, str], str] = {}
    columns = ["suite", "metric", "judge", "system", "task", "value", "n_items", "na_reason", "detail",
               "judged_share", "unjudged_reason", "scale"]
    present = [c for c in columns if c in scores.columns]
    for row in scores.select(present).iter_rows(named=True):
        value = row["value"]
        scales.setdefault(((row["suite"], row["metric"], row["judge"]), row["system"]), row["scale"])
        cells.setdefault((row["suite"], row["metric"], row["judge"]), {}).setdefault(row["system"], {})[row["task"]] = \
            TaskValue(value, row["n_items"] or 0, None if value is not None else row["na_reason"] or "unknown reason",
                      row.get("judged_share"), row.get("unjudged_reason"), row.get("detail") or "")
    return cells, scales


def _system_rules(cells: Cells) -> dict[tuple[str, str, str], str]:
    """(system, suite, metric) -> why the metric does not apply to that system, by its suite's rule."""
    ruled = {}
    by_system: dict[tuple[str, str], dict[str, list[TaskValue]]] = {}
    for (suite, metric, _), systems in cells.items():
        for system, tasks in systems.items():
            by_system.setdefault((suite, system), {}).setdefault(metric, []).extend(tasks.values())
    for (suite, system), metrics in by_system.items():
        rule = SUITES[suite].system_rule if suite in SUITES else None
        for metric, why in (rule(metrics) if rule else {}).items():
            ruled[(system, suite, metric)] = why
    return ruled


def _judge_limited(cells: Cells) -> dict[Comparison, dict[str, dict[str, str]]]:
    """comparison -> system -> task -> why, for the N/A rows our judge could not judge; a composite's
    row is limited where one of its parts is."""
    limited: dict[Comparison, dict[str, dict[str, str]]] = {}
    for key, systems in cells.items():
        for system, tasks in systems.items():
            for task, r in tasks.items():
                if r.value is None and r.applies and is_judge_limit(r.detail):
                    limited.setdefault(key, {}).setdefault(system, {})[task] = _limit_text(r.detail)
    def part_limit(suite: str, parts: tuple[str, ...], judge: str, system: str, task: str) -> str | None:
        found = (limited.get((suite, p, j), {}).get(system, {}).get(task) for p in parts for j in (judge, UNJUDGED))
        return next((why for why in found if why), None)

    # composites in their suite's order, so a composite of composites (TVIR Overall) sees its parts' limits
    keys = [k for k in cells if k[0] in SUITES and SUITES[k[0]].composite(k[1]) is not None]
    for suite, metric, judge in sorted(keys, key=lambda k: [c.metric for c in SUITES[k[0]].composites].index(k[1])):
        parts = SUITES[suite].composite(metric).parts
        for system, tasks in cells[(suite, metric, judge)].items():
            for task, r in tasks.items():
                why = part_limit(suite, parts, judge, system, task) if r.value is None else None
                if why:
                    limited.setdefault((suite, metric, judge), {}).setdefault(system, {})[task] = why
    return limited


def _limit_text(detail: str) -> str:
    return detail[detail.index(JUDGE_LIMIT):][:160]


def _compare(key: Comparison, tasks: dict[str, dict[str, TaskValue]], scales: Mapping[tuple[Comparison, str], str],
             ruled: Mapping[tuple[str, str, str], str],
             limited: Mapping[str, Mapping[str, str]], now: datetime, policies: Mapping[str, str]) -> list[dict]:
    """The rows of one comparison: every system scored on the same metric by the same judge."""
    suite, metric, judge = key
    rule, how = _aggregation(suite, metric, policies)
    ruled_out = {s: ruled[(s, suite, metric)] for s in tasks if (s, suite, metric) in ruled}
    rows_of = {s: {t: r for t, r in by_task.items() if r.applies} for s, by_task in tasks.items() if s not in ruled_out}
    values = {s: {t: r.value for t, r in rows.items() if r.value is not None} for s, rows in rows_of.items()}
    # a system with nothing scored cannot narrow the others, unless our judge is why (it must not rank them)
    compared = [s for s in rows_of if values[s] or limited.get(s)]
    shared = set.intersection(*(set(values[s]) for s in compared)) if compared else set()
    union = set().union(*(values[s] for s in compared)) if compared else set()
    shared_means = {s: aggregate(rule, [r for t, r in rows_of[s].items() if t in shared])
                    for s in compared if values[s]} if shared else {}
    # our judge could not judge some system on a task others were scored on: it must not decide a ranking
    blind = sorted(s for s in compared if set(limited.get(s, {})) & union)
    scores = {s: aggregate(rule, list(rows.values())) for s, rows in rows_of.items() if rows}  # the number shown
    covering = [s for s in compared if union and union <= values[s].keys()]
    ranks = {} if blind else _ranks(suite, metric, {s: scores[s] for s in covering})
    rows = []
    for system, by_task in tasks.items():
        base = {"system": system, "suite": suite, "metric": metric, "judge": judge,
                "scale": scales[(key, system)], "aggregation": how,
                "computed_at": now, "_shared": shared}
        if system in ruled_out or not rows_of[system]:
            why = ruled_out.get(system) or _not_applicable_text(by_task)
            rows.append({**base, "mean": None, "ci_low": None, "ci_high": None, "n_tasks": 0, "n_scored": 0,
                         "coverage": None, "shared_mean": None, "n_shared": len(shared), "rank": None,
                         "coverage_note": f"not applicable: {why}"[:500], "validity": None, "adjusted_mean": None,
                         "status": NOT_APPLICABLE})
            continue
        task_rows = list(rows_of[system].values())
        pairs = weighted_values(rule, task_rows)
        ci = bootstrap_ci([v for v, _ in pairs], weights=None if rule != "micro" else [w for _, w in pairs])
        if ci and rule == "sum":  # a total is the mean times the tasks
            ci = (ci[0] * len(pairs), ci[1] * len(pairs))
        score, valid = scores[system], validity(task_rows)
        missing = {t: r.na_reason for t, r in rows_of[system].items() if r.value is None}
        own_limits = limited.get(system, {})
        status = ("not_comparable" if own_limits and system not in ranks
                  else "scored" if score is not None else "no_score")
        note = _coverage_note(values[system], missing, union, len(shared), len(compared), judge, metric)
        if own_limits:
            head = _not_comparable_note(own_limits, len(task_rows), ranked=system in ranks)
            note = head + (f"; {note}" if note else "")
        elif score is not None and system not in ranks and blind and _direction(suite, metric):
            note = (f"not ranked: our judge could not judge {', '.join(blind)} on the tasks compared"
                    + (f"; {note}" if note else ""))
        rows.append({
            **base, "mean": score, "ci_low": ci[0] if ci else None, "ci_high": ci[1] if ci else None,
            "n_tasks": len(task_rows), "n_scored": len(values[system]),
            "coverage": len(values[system]) / len(task_rows),
            "shared_mean": shared_means.get(system), "n_shared": len(shared), "rank": ranks.get(system),
            "coverage_note": note[:500], "validity": valid, "adjusted_mean": validity_adjusted(score, valid),
            "status": status,
        })
    return rows


def _not_applicable_text(by_task: Mapping[str, TaskValue]) -> str:
    details = Counter(r.detail for r in by_task.values() if not r.applies)
    example = details.most_common(1)[0][0] if details else ""
    return f"does not apply to any of its {len(by_task)} task(s)" + (f" ({example})" if example else "")


def _not_comparable_note(limits: Mapping[str, str], n_tasks: int, ranked: bool) -> str:
    example = Counter(limits.values()).most_common(1)[0][0]
    head = f"{len(limits)} of {n_tasks} task(s) not judged: {example}"
    return head + ("" if ranked else "; not comparable, not ranked (the judge, not the system, is why)")


def _compose(rows: list[dict], cells: Cells, policies: Mapping[str, str]) -> list[dict]:
    """Composites aggregated `of_parts` take the paper's formula over the system's numbers of their
    parts, each aggregated over the tasks on which every part has a value (a part computed without a
    judge is read from the `none` rows); ranked again on the formula over the shared complete tasks.
    No CI: it is not a mean of task values."""
    groups: dict[tuple[str, str, str], list[dict]] = {}

    def order(r: dict) -> int:  # a composite of composites (TVIR Overall of TA, VA) after its parts
        return [c.metric for c in SUITES[r["suite"]].composites].index(r["metric"])

    pending = [r for r in rows if r["aggregation"].startswith("of_parts") and r["suite"] in SUITES
               and SUITES[r["suite"]].composite(r["metric"]) is not None]
    for r in sorted(pending, key=order):
        groups.setdefault((r["suite"], r["metric"], r["judge"]), []).append(r)
        if r["status"] == NOT_APPLICABLE:
            continue
        composite = SUITES[r["suite"]].composite(r["metric"])
        own = cells[(r["suite"], r["metric"], r["judge"])][r["system"]]
        complete = {t for t, v in own.items() if v.value is not None}
        r["_complete"] = complete
        r["mean"] = _of_parts(r, r["metric"], complete, cells, policies)
        r["shared_mean"] = _of_parts(r, r["metric"], complete & r["_shared"], cells, policies) if r["_shared"] else None
        r["ci_low"] = r["ci_high"] = None
        r["adjusted_mean"] = validity_adjusted(r["mean"], r["validity"])
        if r["mean"] is None and r["status"] == "scored":
            r["status"] = "no_score"
        if not complete and r["status"] != "not_comparable":
            why = (f"no task has every part of {r['metric']} ({', '.join(composite.parts)}): "
                   f"no number and no rank")
            r["coverage_note"] = (why + (f"; {r['coverage_note']}" if r["coverage_note"] else ""))[:500]
    for (suite, metric, _), members in groups.items():
        # by the number shown, among the systems complete on every task any of them is complete on
        union = set().union(*(r.get("_complete", set()) for r in members))
        blind = any(r["status"] == "not_comparable" for r in members)
        covering = {r["system"]: r["mean"] for r in members
                    if r["status"] != NOT_APPLICABLE and union and union <= r.get("_complete", set())}
        ranks = {} if blind else _ranks(suite, metric, covering)
        for r in members:
            r["rank"] = ranks.get(r["system"])
            r.pop("_complete", None)
    return rows


def _of_parts(row: dict, metric: str, tasks: set[str], cells: Cells, policies: Mapping[str, str]) -> float | None:
    """The composite's formula over the row's system's numbers of its parts on `tasks`; a part that is
    itself aggregated of its parts (TVIR Overall of TA and VA) is computed the same way."""
    if not tasks:
        return None
    suite, system, judge = row["suite"], row["system"], row["judge"]
    composite = SUITES[suite].composite(metric)
    found = {}
    for part in composite.parts:
        rule, _ = _aggregation(suite, part, policies)
        if rule == "of_parts" and SUITES[suite].composite(part) is not None:
            found[part] = _of_parts(row, part, tasks, cells, policies)
            continue
        part_rows = (cells.get((suite, part, judge), {}).get(system)
                     or cells.get((suite, part, UNJUDGED), {}).get(system) or {})
        found[part] = aggregate(rule, [v for t, v in part_rows.items() if t in tasks])
    return composite.formula(found)


def _aggregation(suite: str, metric: str, policies: Mapping[str, str]) -> tuple[str, str]:
    """(rule, the text every row of the metric carries): the suite's rule, or its policy's choice."""
    spec = SUITES[suite].spec(metric) if suite in SUITES else None
    rule = spec.aggregation(policies) if spec else "mean"
    chosen = f" ({spec.aggregate_policy})" if spec and spec.aggregate_policy else ""
    return rule, f"{rule}{chosen}: {RULES[rule]}"


def _ranks(suite: str, metric: str, means: dict[str, float | None]) -> dict[str, int]:
    """Competition ranks on these numbers (the covering systems' means), in the metric's direction;
    none for a metric that is not ranked."""
    direction = _direction(suite, metric)
    scored = {s: round(m, 9) for s, m in means.items() if m is not None}
    return competition_ranks(scored, direction > 0) if direction and scored else {}


def _direction(suite: str, metric: str) -> int:
    """+1 higher is better, -1 lower is better, 0 not ranked: as the suite declares the metric (counts
    that describe a report rather than grade it get no rank); higher for a metric no suite declares."""
    spec = SUITES[suite].spec(metric) if suite in SUITES else None
    return spec.better if spec else 1


def _coverage_note(scored: dict[str, float], missing: dict[str, str], union: set[str], n_shared: int,
                   n_compared: int, judge: str, metric: str) -> str:
    """Empty when the system was scored on every task any compared system was scored on; otherwise
    what it lacks, why, that it has no rank, and where its shared-task comparison is."""
    lacking = union - scored.keys()
    if not lacking:
        return ""
    # no row at all: the task came after the system's last run, or another judge scored it
    not_evaluated = "not evaluated" if judge == UNJUDGED else f"not evaluated by {judge}"
    reasons = Counter(missing.get(task, not_evaluated) for task in lacking)
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    if not scored:
        return f"no task scored ({why}); not ranked"
    shared = (f"its {metric} on the {n_shared} task(s) all {n_compared} systems scored is the shared column"
              if n_shared else "no task is scored for every system")
    return (f"scored on {len(scored)} of the {len(union)} tasks other systems were scored on ({why}); "
            f"not ranked (ranks are over the systems scored on all {len(union)}); {shared}")
