"""What is due, read from our own tables: never materialised, changed inputs or parser, provider
failures, partitions made under other settings. Dagster-free, so `dreval run` with nothing to do
never imports Dagster; `defs/runner.py` executes the plan."""
from __future__ import annotations

import difflib
import fnmatch
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Mapping, Sequence

from ..benchmarks.policies import shapes_suites
from ..config import POLICY_SETTINGS, Settings
from ..core.report_rows import PARSER_VERSION
from ..environment import env_int
from ..errors import SelectionError
from ..stages.report_images import changed_image_partitions
from ..stages.reports import report_input_version, report_source_hash, trace_source_hash
from ..store.db import Store
from ..store.imports import imported_benchmarks, imported_report_hashes, tasks_in_scope
from ..store.publish import published_path
from ..store.published import last_published_import
from ..store.registry import load_systems, load_tasks, task_hashes
from ..store.shaping import shaping_settings


@dataclass
class Selection:
    systems: Sequence[str] | None = None
    task_glob: str | None = None
    benchmark: str | None = None
    force: bool = False
    refetch_failed: bool = False


RUN_PARTITIONS_ENV = "DREVAL_RUN_PARTITIONS"
DEFAULT_RUN_PARTITIONS = 250  # ~1.2-1.7 MB of a run's memory per partition of ~2,700-word reports (bench_scale)

# Why a partition is due (the first that applies, in this order).
FORCED = "forced"
NEW = "new"
TASK_CHANGED = "task changed"
REPORT_CHANGED = "report changed"
TRACE_CHANGED = "trace changed"
IMAGES_CHANGED = "images changed"
PARSER_CHANGED = "parser changed"
PROVIDER_RETRY = "retrying a provider failure"
REFETCH = "refetching failed URLs"
SETTINGS_CHANGED = "settings changed"  # made under settings no longer known by name
# a shaping setting's name -> how a change of it is said
SETTING_CHANGED = {"judge": "judge changed", "suites": "suites changed", "scoring": "scoring code changed",
                   "evidence_search": "evidence search changed", "limits": "input limits changed",
                   "extraction": "claim extraction changed"}


@dataclass
class Plan:
    tasks: list[str] = field(default_factory=list)
    per_system: dict[str, list[str]] = field(default_factory=dict)
    leaderboard: bool = False
    publish: bool = False  # results.duckdb is older than the leaderboard (a publish was cut short)
    why: dict[tuple[str, str], str] = field(default_factory=dict)  # (system or '', task) -> why it is due

    @property
    def n_system_task(self) -> int:
        return sum(len(v) for v in self.per_system.values())

    @property
    def empty(self) -> bool:
        return not (self.tasks or self.per_system or self.leaderboard or self.publish)

    def reasons(self, of_tasks: bool) -> Counter:
        """Partitions due by reason: the task partitions', or the system x task partitions'."""
        return Counter(why for (system, _), why in self.why.items() if (system == "") == of_tasks)


# Judgments that failed on the provider's side are transient: their partitions are due again (what
# succeeded comes back from the judge cache, so a retry pays only for what failed).
PROVIDER_FAILED_REPORTS = " UNION ".join(
    f"SELECT DISTINCT system, task FROM {table} WHERE {column} = 'provider_failure'"
    for table, column in (("reports", "na_reason"), ("parsed_reports", "extraction_na_reason"),
                          ("claim_verdicts", "na_reason"), ("report_judgments", "na_reason"),
                          ("metric_scores", "na_reason")))
PROVIDER_FAILED_TASKS = "SELECT DISTINCT task FROM task_rubrics WHERE na_reason = 'provider_failure'"
# Judge answers that never validated (after our re-asks): asking again unchanged would pay for the same
# answer, so a plain run leaves them; the run's summary says what `--force` would re-ask.
INVALID_ANSWER_REPORTS = " UNION ".join(  # "answer failed validation ...", "answer cut off ...", not a judge limit
    f"SELECT DISTINCT system, task FROM {table} WHERE na_reason = 'pipeline_failure' "
    f"AND starts_with(coalesce(reason, ''), 'answer ')" for table in ("claim_verdicts", "report_judgments"))


def plan(store: Store, selection: Selection, settings: Settings | None = None) -> Plan:
    """What is due, and why: never materialised, changed inputs or parser, provider failures, and
    (with `settings`) partitions made under other settings that shape them (judge, model, suites, the
    policies of the benchmarks scoring them). A selection that matches nothing is a SelectionError."""
    tasks = load_tasks(store)
    systems = load_systems(store)
    _check_selection(selection, tasks, systems)
    chosen_tasks = [k for k, t in tasks.items() if _task_selected(k, t.original_id, t.benchmark, selection)]
    chosen_systems = [s for s in systems if not selection.systems or s in selection.systems]
    extra_suites = settings.extra_suites if settings else ()
    suites_of = {key: frozenset(["core", task.benchmark, *extra_suites]) for key, task in tasks.items()}

    done_tasks = store.materialised("tasks")
    done_rubrics = store.materialised("task_rubrics")
    stored_task_hash = dict(store.query("SELECT task, content_hash FROM tasks").iter_rows())
    registry_hash = task_hashes(store)
    result = Plan()
    # --force re-runs task partitions only when no system is named: re-materialising a task
    # makes every system's partitions of it stale, which `--system S --force` must not do.
    force_tasks = selection.force and not selection.systems
    rubric_settings = _made_under_other_settings(store, ("task_rubrics",), settings, suites_of)
    rubric_failed = {t for (t,) in store.query(PROVIDER_FAILED_TASKS).iter_rows()}
    for k in chosen_tasks:
        why = (FORCED if force_tasks else
               NEW if ("", k) not in done_tasks or ("", k) not in done_rubrics else
               TASK_CHANGED if stored_task_hash.get(k) != registry_hash[k] else
               rubric_settings.get(("", k)) or (PROVIDER_RETRY if k in rubric_failed else None))
        if why:
            result.tasks.append(k)
            result.why[("", k)] = why

    done_scores = store.materialised("metric_scores")
    stored_report_hash = {(s, t): h for s, t, h in store.query(
        "SELECT system, task, content_hash FROM reports").iter_rows()}
    images_changed = changed_image_partitions(store)  # a folder system's image file changed, appeared or went
    done_images = store.materialised("report_images")  # a home from before report_images has none
    stored_trace_hash = {(s, t): h for s, t, h in store.query(  # a folder system's trace beside its report
        "SELECT system, task, sha256(trace) FROM reports").iter_rows()}
    parser_versions = {(s, t): v for s, t, v in store.query(
        "SELECT system, task, parser_version FROM parsed_reports").iter_rows()}
    provider_failed = {(s, t) for s, t in store.query(PROVIDER_FAILED_REPORTS).iter_rows()}
    other_settings = _made_under_other_settings(store, ("metric_scores", "parsed_reports"), settings, suites_of)
    fetch_failed = {(s, t) for s, t in store.query(
        "SELECT DISTINCT system, task FROM fetched_references WHERE status <> 'ok' AND backend <> 'sandbox'"
    ).iter_rows()} if selection.refetch_failed else set()
    imported_hashes, scope = imported_report_hashes(store), imported_benchmarks(store)
    benchmark_of = {key: task.benchmark for key, task in tasks.items()}
    for system in chosen_systems:
        entry = systems[system]
        todo = []
        for task in tasks_in_scope(entry, chosen_tasks, benchmark_of, scope):
            key = (system, task)

            def report_changed() -> bool:  # its report is written in the run when an endpoint writes it
                return entry.kind != "endpoint" and stored_report_hash.get(key) != report_source_hash(
                    entry, task, tasks[task].original_id, imported_hashes)

            def trace_changed() -> bool:
                return entry.kind == "folder" and stored_trace_hash.get(key) != trace_source_hash(
                    entry, task, tasks[task].original_id)

            why = (FORCED if selection.force else
                   NEW if key not in done_scores or key not in done_images else
                   _task_reason(result.why.get(("", task))) if task in result.tasks
                   else TASK_CHANGED if done_scores[key] < done_tasks.get(("", task), done_scores[key])
                   else REPORT_CHANGED if report_changed()
                   else TRACE_CHANGED if trace_changed()
                   else IMAGES_CHANGED if key in images_changed
                   else PARSER_CHANGED if parser_versions.get(key) != PARSER_VERSION
                   else other_settings.get(key) or (PROVIDER_RETRY if key in provider_failed
                                                    else REFETCH if key in fetch_failed else None))
            if why:
                todo.append(task)
                result.why[key] = why
        if todo:
            result.per_system[system] = todo
    # when the whole-run assets were last built (None: never)
    board, agreement = (store.materialised(asset).get(("", "")) for asset in ("leaderboard", "agreement"))
    result.leaderboard = (bool(result.tasks or result.per_system) or board is None or agreement is None
                          or selection.force or _published_since_agreement(store, agreement)
                          or _board_older_than_scores(board, done_scores))
    result.publish = not result.leaderboard and _copy_older_than(store, max(board, agreement))
    return result


# what a changed input file makes due (the report, its trace, its images): the UI is told as an observation
INPUT_FILE_REASONS = frozenset({REPORT_CHANGED, TRACE_CHANGED, IMAGES_CHANGED})


def report_input_versions(store: Store, keys: Sequence[tuple[str, str]] | None = None
                          ) -> dict[tuple[str, str], str]:
    """The current data version of each (system, task)'s report input, where it has one now (keys
    None: every partition a system is evaluated on)."""
    systems, tasks, imported = load_systems(store), load_tasks(store), imported_report_hashes(store)
    if keys is None:
        benchmark_of, scope = {key: task.benchmark for key, task in tasks.items()}, imported_benchmarks(store)
        keys = [(system, task) for system, entry in systems.items()
                for task in tasks_in_scope(entry, list(tasks), benchmark_of, scope)]
    versions = {}
    for system, task in keys:
        if system in systems and task in tasks:
            version = report_input_version(systems[system], task, tasks[task].original_id, imported)
            if version is not None:
                versions[(system, task)] = version
    return versions


def _task_reason(why: str | None) -> str:
    """Why a system's partition is due when its task partition is: the task's own reason when a setting
    or a provider failure makes it due (the same holds for the system's partition), else its task changed."""
    return why if why not in (None, NEW, FORCED) else TASK_CHANGED


def _check_selection(selection: Selection, tasks: Mapping, systems: Mapping) -> None:
    """A --system, --suite or --task that matches nothing is an error naming the closest names."""
    unknown = [s for s in selection.systems or [] if s not in systems]
    if unknown:
        raise SelectionError(f"unknown system(s): {', '.join(unknown)}; "
                             + _closest(unknown, list(systems), "registered systems"))
    benchmarks = sorted({t.benchmark for t in tasks.values()})
    if selection.benchmark and selection.benchmark not in benchmarks:
        from ..benchmarks.registry import BENCHMARKS

        known = "it is a benchmark, but no task of it is registered" if selection.benchmark in BENCHMARKS else \
            _closest([selection.benchmark], benchmarks, "benchmarks with tasks")
        raise SelectionError(f"--suite {selection.benchmark} matches no task: {known}")
    if selection.task_glob and not any(_task_selected(k, t.original_id, t.benchmark, selection)
                                       for k, t in tasks.items()):
        keys = [k for k, t in tasks.items() if not selection.benchmark or t.benchmark == selection.benchmark]
        originals = [tasks[k].original_id for k in keys if tasks[k].original_id not in keys]
        where = f" of {selection.benchmark}" if selection.benchmark else ""
        raise SelectionError(f"--task {selection.task_glob!r} matches no task{where}; "
                             + _closest([selection.task_glob], keys, "tasks", also=originals))


def _closest(wanted: Sequence[str], names: Sequence[str], what: str, also: Sequence[str] = ()) -> str:
    """'did you mean a, b?' by difflib over `names` and `also` (other names of the same things: original
    ids), the glob's characters left out; else a few of `names`."""
    bare = [w.translate(str.maketrans("", "", "*?[]")) for w in wanted]
    pool = [*names, *also]
    close = list(dict.fromkeys(m for w in bare for m in difflib.get_close_matches(w, pool, n=3, cutoff=0.6)))
    if not close:  # a part of a name ("tvir" of "tvir.*") is close too
        close = [n for n in pool if any(w and w in n for w in bare)][:3]
    if close:
        return f"did you mean {', '.join(close[:3])}?"
    if not names:
        return f"no {what} yet"
    return f"{what}: {', '.join(sorted(names)[:8])}{' ...' if len(names) > 8 else ''}"


def _board_older_than_scores(board: datetime, done_scores: Mapping[tuple[str, str], datetime]) -> bool:
    """Scores were written after the leaderboard was built: a leaderboard step was killed, failed, or
    never launched after the evaluation (derived state is due like any partition)."""
    return bool(done_scores) and max(done_scores.values()) > board


def _copy_older_than(store: Store, built: datetime) -> bool:
    """results.duckdb is missing or older than the leaderboard and agreement (built at `built`) it holds."""
    copy = published_path(store.db_path)
    if not copy.exists():
        return True
    return datetime.fromtimestamp(copy.stat().st_mtime, timezone.utc).replace(tzinfo=None) < built


def _published_since_agreement(store: Store, built: datetime) -> bool:
    """Published scores were imported after the agreement figures were last built."""
    imported = last_published_import(store)
    return imported is not None and imported > built


def _made_under_other_settings(store: Store, assets: Sequence[str], settings: Settings | None,
                               suites_of: Mapping[str, frozenset[str]]) -> dict[tuple[str, str], str]:
    """(system, task) -> why: partitions of `assets` made under other settings that shape them. A
    changed policy shapes only the partitions scored by a suite of the benchmark declaring it; the
    settings behind an old version are read from `shaping_settings` (unknown: "settings changed")."""
    if settings is None:
        return {}
    due: dict[tuple[str, str], str] = {}
    for asset in assets:
        current_version, current = settings.shaping_version(asset), settings.shaping_values(asset) or {}
        stored = store.settings_versions(asset)
        known = shaping_settings(store, {v for v in stored.values() if v and v != current_version})
        for key, version in stored.items():
            if version == current_version or key in due:
                continue
            why = _what_changed(known.get(version) if version else None, current,
                                suites_of.get(key[1], frozenset()))
            if why:
                due[key] = why
    return due


def _what_changed(before: dict | None, now: dict, suites: frozenset[str]) -> str | None:
    """Why settings `before` -> `now` make a partition scored under `suites` due (None: they do not)."""
    if before is None:
        return SETTINGS_CHANGED
    changed = [name for name in sorted(set(before) | set(now)) if before.get(name) != now.get(name)]
    said = [SETTING_CHANGED.get(name, f"{name} changed") for name in changed if name not in POLICY_SETTINGS]
    policies = sorted({policy for name in changed if name in POLICY_SETTINGS
                       for policy in _changed_keys(before.get(name) or {}, now.get(name) or {})
                       if shapes_suites(policy, suites)})
    said += [f"policy {', '.join(policies)} changed"] if policies else []
    return "; ".join(said) or None


def _changed_keys(before: dict, now: dict) -> list[str]:
    return [k for k in set(before) | set(now) if before.get(k) != now.get(k)]


def na_summary(store: Store, the_plan: Plan) -> list[str]:
    """After a run: its N/A metric rows by reason, and how many of its partitions the next run retries."""
    keys = [(system, task) for system, tasks in the_plan.per_system.items() for task in tasks]
    if not keys:
        return []
    ran = "ran AS (SELECT unnest(?) AS system, unnest(?) AS task)"
    params = [[k[0] for k in keys], [k[1] for k in keys]]
    counts = store.query(
        f"WITH {ran} SELECT m.na_reason, count(*) AS n FROM metric_scores m SEMI JOIN ran USING (system, task) "
        "WHERE m.na_reason IS NOT NULL GROUP BY ALL ORDER BY n DESC, 1", params)
    retried = store.query(f"WITH {ran}, failed AS ({PROVIDER_FAILED_REPORTS}) "
                          "SELECT count(*) FROM failed SEMI JOIN ran USING (system, task)", params).item()
    lines = []
    if counts.height:
        lines.append("N/A metric rows by reason: " + ", ".join(f"{r} {n}" for r, n in counts.iter_rows())
                     + ' (dreval sql "SELECT * FROM na_scores")')
    if retried:
        lines.append(f"{retried} partition(s) had provider failures and will be retried by the next `dreval run`")
    invalid = store.query(f"WITH {ran}, invalid AS ({INVALID_ANSWER_REPORTS}) "
                          "SELECT DISTINCT system FROM invalid SEMI JOIN ran USING (system, task) ORDER BY 1", params)
    if invalid.height:
        systems = invalid["system"].to_list()
        lines.append(f"judge answers that never validated (pipeline_failure) in {len(systems)} system(s): a plain "
                     f"`dreval run` leaves them; `dreval run --force --system {systems[0]}` re-asks them")
    return lines


def _task_selected(key: str, original_id: str, benchmark: str, selection: Selection) -> bool:
    if selection.benchmark and benchmark != selection.benchmark:
        return False
    if selection.task_glob:
        return fnmatch.fnmatch(key, selection.task_glob) or fnmatch.fnmatch(original_id, selection.task_glob)
    return True


def contiguous_ranges(wanted: Sequence[str], order: Sequence[str]) -> list[tuple[str, str]]:
    """Split `wanted` into (first, last) runs that are contiguous in `order`."""
    wanted_set = set(wanted)
    ranges, start, prev = [], None, None
    for key in order:
        if key in wanted_set:
            start = start or key
            prev = key
        elif start:
            ranges.append((start, prev))
            start = None
    if start:
        ranges.append((start, prev))
    return ranges


def run_partitions_setting() -> int:
    """`DREVAL_RUN_PARTITIONS`: the most system x task partitions one evaluation run holds."""
    return env_int(RUN_PARTITIONS_ENV, DEFAULT_RUN_PARTITIONS, minimum=1)


def evaluation_blocks(per_system: Mapping[str, Sequence[str]], system_order: Sequence[str],
                      task_order: Sequence[str], max_partitions: int | None = None) -> list[tuple[str, str, str, str]]:
    """(first system, last system, first task, last task) blocks covering exactly the pairs of
    `per_system`, each one run: Dagster reads a system x task range as the product of a system range
    and a task range, so systems due on the same tasks and adjacent in `system_order` share runs (as
    Dagster's own single-run backfill would), which spreads each run's fixed cost over more partitions.
    A block over `max_partitions` is cut into slices of at most that many (task ranges, then system
    ranges), each its own run: a run's memory is bounded by the setting, not by the size of the home,
    and a failed slice fails only its own partitions."""
    place = {system: i for i, system in enumerate(system_order)}
    task_place = {task: i for i, task in enumerate(task_order)}
    unknown = sorted({s for s, tasks in per_system.items() if tasks and s not in place}
                     | {t for tasks in per_system.values() for t in tasks if t not in task_place})
    if unknown:  # a range cannot name them: never drop them silently
        raise ValueError(f"not (yet) Dagster partitions: {', '.join(unknown)}")
    by_tasks: dict[tuple[str, ...], list[str]] = {}
    for system, tasks in per_system.items():
        if tasks:
            by_tasks.setdefault(tuple(sorted(tasks)), []).append(system)
    blocks = []
    for tasks, systems in by_tasks.items():
        for first_system, last_system in contiguous_ranges(systems, system_order):
            blocks += [(first_system, last_system, first, last) for first, last in contiguous_ranges(tasks, task_order)]
    if max_partitions:
        blocks = [piece for block in blocks
                  for piece in _slices(block, max_partitions, system_order, task_order, place, task_place)]
    return sorted(blocks, key=lambda b: (place[b[0]], task_place[b[2]]))


def _slices(block: tuple[str, str, str, str], limit: int, system_order: Sequence[str], task_order: Sequence[str],
            place: Mapping[str, int], task_place: Mapping[str, int]) -> list[tuple[str, str, str, str]]:
    """The block cut into system x task ranges of at most `limit` partitions (all its pairs are due)."""
    first_system, last_system, first, last = block
    systems = system_order[place[first_system]:place[last_system] + 1]
    tasks = task_order[task_place[first]:task_place[last] + 1]
    if len(systems) * len(tasks) <= limit:
        return [block]
    pieces = []
    for start in range(0, len(systems), limit):
        group = systems[start:start + limit]
        step = max(1, limit // len(group))
        pieces += [(group[0], group[-1], tasks[i], tasks[min(i + step, len(tasks)) - 1])
                   for i in range(0, len(tasks), step)]
    return pieces
