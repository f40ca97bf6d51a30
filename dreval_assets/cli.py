"""The `dreval` command."""
from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import sys
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from .background import in_background
from .releases.generic import load_generic
from .config import JUDGES, ConfigError, Settings
from .home import DATABASE, HOME_FOLDER, MODES, FoundHome, find_home
from .errors import SelectionError, first_line, redact, redact_url
from .core.keys import InvalidKeyError, slugify, validate_key
from .benchmarks.suites import SUITES
from .presentation.leaderboard_view import FORMATS, render, wide_leaderboard
from .store.db import DatabaseLocked, Store
from .store.compact import compact_if_bloated, compact_ratio_setting
from .store.publish import publish, published_path
from .store.registry import SystemEntry, load_systems, register_system, register_tasks


class CliError(Exception):
    pass


class RunInterrupted(Exception):
    """Ctrl-C: said in one line, exit status 130 (the shell's convention for SIGINT)."""


# Commands that may change the results: each ends by refreshing the published copy people query.
PUBLISHING_COMMANDS = {"demo", "run", "import", "refresh", "add-system"}
# The only commands that may create a home; every other one refuses a folder that is not one.
# `refresh` registers a live benchmark's tasks: an import from the web.
CREATING_COMMANDS = {"init", "demo", "import", "refresh", "add-system"}
# Commands that judge: they refuse an environment naming another judge than the home's.
JUDGING_COMMANDS = {"demo", "run", "refresh"}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    Store.on_lock_wait = lambda message: print(f"dreval: {message}", file=sys.stderr, flush=True)
    try:
        found = _home_of(args)
        settings = Settings.from_env(found.path)
        if not found.exists and args.command not in CREATING_COMMANDS:
            raise CliError(_no_home(found))
        # stderr: stdout stays the command's output (JSON, CSV) for whoever reads it
        print(f"dreval: home {found.path}" + ("" if found.how == "--home" else f" ({found.how})"),
              file=sys.stderr, flush=True)
        if args.command in JUDGING_COMMANDS:
            settings.check_judge_is_the_homes()
        compaction = compact_ratio_setting() if args.command in PUBLISHING_COMMANDS else 0  # checked before work
        code = args.handler(args, settings)
        copy = published_path(settings.db_path)
        # a run's leaderboard job publishes (asset published_results); other changes are published here
        if args.command in PUBLISHING_COMMANDS and settings.db_path.exists() and (
                args.command not in ("run", "demo") or not copy.exists()):
            publish(Store(settings.db_path))
        compact_if_bloated(Store(settings.db_path, lock_wait_s=0), compaction)  # replaced rows' space given back
        return code
    except (CliError, ConfigError, SelectionError, InvalidKeyError, KeyError, FileNotFoundError,
            DatabaseLocked) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"dreval: error: {redact(str(message))}", file=sys.stderr)
        return 2
    except RunInterrupted as exc:
        print(f"dreval: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:  # outside a Dagster run (planning, registering): nothing half-written to cancel
        print("dreval: interrupted; nothing was lost (`dreval run` resumes)", file=sys.stderr)
        return 130
    except duckdb.IOException as exc:  # the database file cannot be written or read: the same, from DuckDB
        print(f"dreval: error: {first_line(exc)}; check the home's disk space and permissions", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a read-only or unreadable home: what and where, in one line
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"dreval: error: {exc.strerror or first_line(exc)}{where}; check the home's disk space and "
              f"permissions", file=sys.stderr)
        return 2


YOUNG_OBJECTS_BEFORE_GC = 20_000
_COMMAND_PROCESS = False  # set by `console`: this process is the command's own, not a test's or a library user's


def console() -> None:
    """The `dreval` command: `main`, then the process ends at once. Python's own shutdown frees a large
    run's objects one by one (seconds, for memory the system takes back at once); everything a command
    writes is committed by then, so only the judge worker, the log handlers and the terminal are closed
    first. An exception `main` does not turn into a status ends the usual way, with its traceback.

    Python's cyclic garbage collector runs after every 700 new objects by default; a run makes millions
    that live for a request or a step, and each full pass walks them all (~3 s of a 10 x 10 run's main
    thread, ~0.9 s at this threshold). A run freezes the objects it has before its first Dagster run
    (modules, definitions, instance): a full pass, which the leaderboard's plots set off, then walks only
    what the runs made (0.34 s -> 0.06 s at 10 x 10)."""
    global _COMMAND_PROCESS
    _COMMAND_PROCESS = True
    gc.set_threshold(YOUNG_OBJECTS_BEFORE_GC, 10, 10)
    code = main()
    from .judges.judge_loop import JUDGE_LOOP

    JUDGE_LOOP.close_workers()
    if "dreval_assets.judges.judge_worker" in sys.modules:
        sys.modules["dreval_assets.judges.judge_worker"].end_early()
    for module, helper in (("dreval_assets.presentation.plots", "PLOT_HELPER"),
                           ("dreval_assets.stages.parse_helper", "HELPER")):
        if module in sys.modules:  # loaded: it may have started a helper process
            getattr(sys.modules[module], helper).close()
    if "dreval_assets.defs.event_log" in sys.modules:  # its open shards' logs folded in, not left beside them
        sys.modules["dreval_assets.defs.event_log"].close_open_event_logs()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _home_of(args) -> FoundHome:
    """The home the command works on; `init` without --home or DREVAL_HOME makes one right here."""
    found = find_home(args.home)
    if args.command == "init" and found.how not in ("--home", "DREVAL_HOME"):
        return FoundHome(Path.cwd().resolve() / HOME_FOLDER, "new" if not (Path.cwd() / HOME_FOLDER).is_dir()
                         else "found here")
    return found


def _no_home(found: FoundHome) -> str:
    if found.how == "new":
        return (f"no dreval home in {found.path.parent} or any folder above it: create one with `dreval init` "
                f"(or `dreval demo`, `import`, `add-system`), or name one with --home or DREVAL_HOME")
    return (f"{found.path} ({found.how}) is not a dreval home (no {DATABASE} in it): create it with "
            f"`dreval --home {found.path} init`, or name another")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dreval", description="Evaluate deep-research systems.")
    parser.add_argument("--home", help="home folder (default: $DREVAL_HOME, else the nearest .dreval folder in the "
                                       "current directory or above it)")
    sub = parser.add_subparsers(dest="command", required=True)

    init = sub.add_parser("init", help="create an empty home (.dreval here, or --home / DREVAL_HOME)")
    init.set_defaults(handler=cmd_init)

    judge = sub.add_parser("judge", help="show the judge the home is scored with; `judge set` switches it")
    judge_sub = judge.add_subparsers(dest="judge_command")
    judge.set_defaults(handler=cmd_judge)
    switch = judge_sub.add_parser("set", help="switch the home's judge (the next `dreval run` re-scores with it; "
                                              "the previous judge's scores are kept beside)")
    switch.add_argument("kind", nargs="?", choices=JUDGES,
                        help="heuristic (offline) or openai (default: $DREVAL_JUDGE)")
    switch.add_argument("--model", help="the judge model (default: $DREVAL_JUDGE_MODEL)")
    switch.add_argument("--base-url", help="the OpenAI-compatible endpoint (default: $OPENAI_BASE_URL, else OpenAI's)")
    switch.add_argument("--mode", choices=MODES, help="instructor mode (default: $DREVAL_JUDGE_MODE, else tools)")
    switch.add_argument("--vision-model", help="default: $DREVAL_JUDGE_VISION_MODEL")
    switch.add_argument("--embedding-model", help="default: $DREVAL_JUDGE_EMBEDDING_MODEL")
    switch.set_defaults(handler=cmd_judge)

    demo = sub.add_parser("demo", help="register the bundled demo, materialise everything, print the leaderboard")
    demo.set_defaults(handler=cmd_demo)

    add = sub.add_parser("add-system", help="register a system: a folder of <task>.md reports, or an "
                                            "OpenAI-compatible endpoint that writes them")
    add.add_argument("name")
    source = add.add_mutually_exclusive_group(required=True)
    source.add_argument("--reports", help="folder of <task key or original id>.md files")
    source.add_argument("--endpoint", help="base URL of an OpenAI-compatible API that writes the reports")
    add.add_argument("--model", help="with --endpoint: the model to call")
    add.add_argument("--api-key-env", default="OPENAI_API_KEY",
                     help="with --endpoint: the environment variable holding its API key (the key is never stored)")
    add.add_argument("--description", default="")
    add.set_defaults(handler=cmd_add_system)

    imp = sub.add_parser("import", help="register a benchmark release's tasks (and its systems' reports) as it is "
                                        "published")
    imp.add_argument("benchmark", help="miroeval | mmdr | dr3 | tvir | wlc | drb | generic")
    imp.add_argument("path", help="the root of the release (the benchmark's repository or dataset folder)")
    imp.add_argument("--system", help="import only this system's reports (with --reports: the name to give them)")
    imp.add_argument("--reports", help="a folder of <task id>.md reports (or a JSONL of {task_id, report}) of --system")
    imp.set_defaults(handler=cmd_import)

    fresh = sub.add_parser("refresh", help="fetch a live benchmark's new tasks and register them (then `dreval run`)")
    fresh.add_argument("source", help="a benchmark with a live refresh: wlc (new Wikipedia Good Articles), miroeval "
                                      "(queries generated from recent headlines), or one registered with its own")
    fresh.set_defaults(handler=cmd_refresh)

    run = sub.add_parser("run", help="materialise what is missing or stale")
    run.add_argument("--system", action="append", help="only this system (repeatable)")
    run.add_argument("--task", help="only tasks whose key or original id matches this glob")
    run.add_argument("--suite", help="only tasks of this benchmark (each task is scored under its own suite)")
    run.add_argument("--force", action="store_true", help="re-materialise the selection even if up to date")
    run.add_argument("--refetch-failed", action="store_true",
                     help="fetch again the cited URLs that failed before (only those), and re-evaluate their reports")
    run.add_argument("--dry-run", action="store_true",
                     help="print the plan (what is due, and why) and run nothing")
    run.set_defaults(handler=cmd_run)

    check = sub.add_parser("verify", help="recompute the aggregates imported releases publish from their published "
                                          "per-item scores; exit 1 on a mismatch beyond rounding")
    check.add_argument("benchmark", nargs="?", help="only this benchmark")
    check.set_defaults(handler=cmd_verify)

    board = sub.add_parser("leaderboard", help="print the leaderboard")
    board.add_argument("--suite")
    board.add_argument("--format", choices=FORMATS, default="table")
    board.add_argument("--by", metavar="ATTRIBUTE",
                       help="one table per value of this task attribute (language, domain, modality, or a release "
                            "label such as set): each metric aggregated over the tasks of that value")
    board.set_defaults(handler=cmd_leaderboard)

    view = sub.add_parser("view", help="the results as web pages on loopback, from the leaderboard down to each claim "
                                       "and its evidence (read-only over results.duckdb)")
    view.add_argument("--port", type=int, default=None,
                      help="the port on 127.0.0.1 (default 8765, the one DREVAL_VIEW_URL's default names; a free one "
                           "when it is taken; 0: any free one)")
    view.add_argument("--export", metavar="DIR",
                      help="write the same pages as static files to DIR (they open from the file system) and exit")
    view.set_defaults(handler=cmd_view)

    sql = sub.add_parser("sql", help="run a read-only SQL query against the results")
    sql.add_argument("query")
    sql.add_argument("--format", choices=("table", "csv", "json"), default="table")
    sql.add_argument("--timeout", type=float, default=60.0,
                     help="seconds a query may run before it is stopped (default 60; 0: no limit)")
    sql.set_defaults(handler=cmd_sql)
    return parser


def _store(settings: Settings) -> Store:
    store = Store(settings.db_path)
    store.ensure_schema()
    return store


def cmd_init(args, settings: Settings) -> int:
    existed = (settings.home / DATABASE).is_file()
    _store(settings)
    print(f"home {settings.home}: {'already a dreval home' if existed else 'created'}; add tasks with `dreval "
          f"import` (or `dreval demo`), systems with `dreval add-system`")
    return 0


def cmd_judge(args, settings: Settings) -> int:
    """`dreval judge`: the home's judge; `dreval judge set ...`: switch it, keeping the previous judge's
    scores beside the new one's."""
    from .home import JudgeChoice, environment_judge, record_judge, recorded_judge
    from .store.earlier_judges import keep_earlier_judge_scores

    recorded = recorded_judge(settings.home)
    if getattr(args, "judge_command", None) != "set":
        if recorded:
            print(f"judge: {recorded.describe()}")
        else:
            print(f"judge: none recorded yet; the next run records the one it scores with "
                  f"({JudgeChoice(**environment_judge()).describe()} from the environment)")
        if settings.judge_conflict:
            print(f"refused while the environment names another: {settings.judge_conflict}")
        return 0
    named = environment_judge()
    kind = args.kind or named.get("kind")
    if not kind:
        raise CliError("name the judge: `dreval judge set heuristic`, or `dreval judge set openai --model M "
                       "[--base-url URL]`")
    flags = {"model": args.model, "base_url": args.base_url, "mode": args.mode, "vision_model": args.vision_model,
             "embedding_model": args.embedding_model}
    if kind != "openai":
        if any(flags.values()):
            raise CliError(f"--model, --base-url, --mode and the vision and embedding models go with openai, "
                           f"not {kind}")
        choice = JudgeChoice(kind)
    else:  # each field from its flag, else from the environment (never from the judge switched from)
        choice = JudgeChoice("openai", **{name: value or named.get(name, "") for name, value in flags.items()})
        if not choice.model:
            raise CliError("`dreval judge set openai` needs --model (or DREVAL_JUDGE_MODEL)")
        parts = urlsplit(choice.base_url)  # credentials in it are allowed (and masked wherever it is shown)
        if choice.base_url and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise CliError(f"--base-url {redact_url(choice.base_url)}: expected http(s)://host[:port]/path")
    if recorded is not None and recorded.identity() == choice.identity():
        print(f"judge: {choice.describe()} (unchanged)")
        return 0
    kept = keep_earlier_judge_scores(_store(settings))
    record_judge(settings.home, choice)
    print(f"judge: {choice.describe()} (was {recorded.describe() if recorded else 'none recorded'})")
    if kept:
        print(f"kept the scores made so far ({', '.join(f'{judge}: {n} rows' for judge, n in kept.items())}) in "
              f"earlier_judge_scores: the leaderboard shows them beside the new judge's, in their own tables")
    print("run `dreval run` to score with it (every partition made with another judge is due)")
    return 0


def _refuse_an_unremembered_switch(settings: Settings, store: Store) -> None:
    """A home scored before homes remembered their judge: refuse to replace its scores when they were
    made with another judge than the environment's (told by the judge settings of its task rubrics)."""
    from .home import recorded_judge, resolve_judge

    if recorded_judge(settings.home) is not None:
        return
    current = settings.shaping_version("task_rubrics")
    if any(v is not None and v != current for v in store.settings_versions("task_rubrics").values()):
        wanted = resolve_judge(settings.home).choice
        raise CliError(f"this home was scored with another judge than the environment's ({wanted.describe()}) "
                       f"and does not remember which: name the judge it was scored with by `dreval judge set ...`, "
                       f"or switch to the environment's with `{wanted.switch_command()}` (each judge's scores are "
                       f"kept apart)")


def _remember_the_judge(settings: Settings) -> None:
    """A home scored for the first time remembers the judge it was scored with."""
    from .home import record_judge, recorded_judge, resolve_judge

    if recorded_judge(settings.home) is None:
        record_judge(settings.home, resolve_judge(settings.home).choice)


def cmd_demo(args, settings: Settings) -> int:
    from .defs.runner import demo_root

    store = _store(settings)
    root = demo_root()
    loaded = load_generic(root)
    for reason in loaded.skipped:
        print(f"skipped: {reason}")
    new, changed = register_tasks(store, loaded.tasks, source="demo")
    print(f"demo tasks: {len(loaded.tasks)} ({len(new)} new, {len(changed)} changed)")
    _tell_dagster(settings, store, [*new, *changed])
    for folder in sorted((root / "systems").iterdir()):
        if folder.is_dir():
            _register_folder_system(store, folder.name, folder, "")
    code = cmd_run(argparse.Namespace(system=None, task=None, suite=None, force=False), settings)
    if code == 0:
        print()
        cmd_leaderboard(argparse.Namespace(suite=None, format="table"), settings)
        print(f"\nresults: {published_path(settings.db_path)} (a copy refreshed after every run: open it with any "
              f"DuckDB client, or `dreval sql`)")
    return code


def _register_folder_system(store: Store, name: str, folder: Path, description: str) -> str:
    from .operations.inbox import register_folder_system

    known = set(load_systems(store))
    try:
        key = register_folder_system(store, name, folder, description)
    except InvalidKeyError:
        raise
    except ValueError as exc:  # its system.json is malformed or refused: one line, not a traceback
        raise CliError(str(exc)) from None
    print(f"system {key}: {'updated' if key in known else 'registered'} ({folder.name})")
    return key


def cmd_add_system(args, settings: Settings) -> int:
    if args.endpoint:
        return _add_endpoint_system(args, settings)
    if args.model:
        raise CliError("--model goes with --endpoint")
    folder = Path(args.reports)
    if not folder.is_dir():
        raise CliError(f"--reports {args.reports}: not a folder")
    reports = sorted(folder.glob("*.md"))
    if not reports:
        raise CliError(f"--reports {args.reports}: no .md reports in it")
    from .operations.importer import check_report_folder

    store = _store(settings)
    key = _register_folder_system(store, args.name, folder, args.description)
    print("\n".join(check_report_folder(store, key, folder).lines()))
    print(f"run `dreval run --system {key}` to evaluate it")
    return 0


def cmd_import(args, settings: Settings) -> int:
    from .operations.importer import ImportFailed, import_release

    store = _store(settings)
    try:
        summary = import_release(store, args.benchmark, Path(args.path), args.system,
                                 Path(args.reports) if args.reports else None)
    except ImportFailed as exc:
        raise CliError(str(exc)) from exc
    print("\n".join(summary.lines()))
    _tell_dagster(settings, store, [*summary.new_task_keys, *summary.changed_task_keys])
    if summary.new_task_keys or summary.changed_task_keys or sum(summary.reports.values()):
        print("run `dreval run` to evaluate what is new or changed")
    return 0


def _tell_dagster(settings: Settings, store: Store, keys: list[str]) -> None:
    """New and changed tasks become partitions and data-version observations in the home's Dagster
    instance, so the UI shows them (and what depends on them) as missing or stale."""
    if not keys:
        return
    from .defs.registry_events import report_registry_changes
    from .defs.runner import open_instance

    report_registry_changes(open_instance(settings), store, keys)


def cmd_refresh(args, settings: Settings) -> int:
    from .judges.factory import make_judge
    from .live.refresh import RefreshFailed, refresh

    store = _store(settings)
    _preflight_judge(settings, store)
    _remember_the_judge(settings)
    try:
        summary = refresh(args.source, store, make_judge(settings.judge, store, settings.home))
    except RefreshFailed as exc:
        raise CliError(str(exc)) from exc
    print("\n".join(summary.lines()))
    _tell_dagster(settings, store, [*summary.new_tasks, *summary.changed_tasks])
    if summary.new_tasks or summary.changed_tasks:
        print("run `dreval run` to evaluate the new tasks")
    if summary.every_call_failed():
        print(f"dreval: error: refresh {args.source}: every call failed, nothing was registered (see the "
              f"lines above; check the configured endpoints and the judge)", file=sys.stderr)
        return 1
    return 0


def _add_endpoint_system(args, settings: Settings) -> int:
    from .fetch.safety import UnsafeURLError, check_syntax

    if not args.model:
        raise CliError("--endpoint needs --model (the model name to call)")
    try:
        check_syntax(args.endpoint)
    except UnsafeURLError as exc:
        raise CliError(f"--endpoint {redact_url(args.endpoint)}: {redact(str(exc))}") from exc
    key = validate_key(slugify(args.name))
    where = redact_url(args.endpoint)  # printed and described without a password
    entry = SystemEntry(key, args.name, "endpoint", None, args.description or f"{args.model} at {where}",
                        endpoint=args.endpoint, model=args.model, api_key_env=args.api_key_env)
    is_new = register_system(_store(settings), entry)
    print(f"system {key}: {'registered' if is_new else 'updated'} (writes its reports with {args.model} at "
          f"{where}); run `dreval run --system {key}` to have it write and evaluate them")
    return 0


def cmd_run(args, settings: Settings) -> int:
    from .operations.planner import Selection, na_summary, plan
    from .operations.run_markers import running, someone_died
    from .store.shaping import remember_shaping

    store = _store(settings)
    refetch = getattr(args, "refetch_failed", False)
    selection = Selection(systems=args.system, task_glob=args.task, benchmark=args.suite, force=args.force,
                          refetch_failed=refetch)
    with store.session():  # one open database for the planner's two dozen reads (~50 ms each otherwise)
        _refuse_an_unremembered_switch(settings, store)
        remember_shaping(store, settings)  # so a later change can say which setting changed, and whom it shapes
        the_plan = plan(store, selection, settings)  # Dagster is imported only when something runs
    if getattr(args, "dry_run", False):
        print(_plan_line(the_plan) if not the_plan.empty else "nothing to do: every selected partition is up to date")
        for line in _plan_details(the_plan):
            print(line)
        print("dry run: nothing was run")
        return 0
    if the_plan.empty:
        if someone_died(settings.dagster_home):
            _mark_orphaned_runs(settings)
        print("nothing to do: every selected partition is up to date")
        return 0
    judged = bool(the_plan.tasks or the_plan.per_system)
    # the judge's check (a request, and its worker process starting) overlaps Dagster's import below
    check = in_background(_checked_judge, settings, store) if judged else None
    _mark_orphaned_runs(settings)
    if check is not None:
        found = check.result()
        if found:
            print(found)
        _remember_the_judge(settings)
        if _COMMAND_PROCESS and the_plan.per_system and settings.judge == "openai":
            from .stages.parse_helper import start_parse_helper

            start_parse_helper()  # the first evaluation's parse and grounding on the second core
    print(_plan_line(the_plan))
    from .defs.definitions import build_definitions
    from .defs.runner import execute, open_instance, sync_partitions
    from .judges.meter import METER
    from .progress import RunProgress

    from .defs.retention import fold_run_logs, keep_runs_setting, prune_run_history

    keep_runs = keep_runs_setting()  # a bad value fails before the run
    instance = open_instance(settings)
    sync_partitions(instance, store)
    judged_before = METER.read()
    with running(settings.dagster_home):
        defs = build_definitions(replace(settings, refetch_failed=refetch))
        if _COMMAND_PROCESS:  # what exists now lives as long as the process: full collections skip it
            gc.freeze()
        with RunProgress() as progress:
            outcomes = execute(defs, instance, the_plan, store=store, progress=progress,
                               command_process=_COMMAND_PROCESS)
    prune_run_history(instance, keep_runs)  # superseded runs beyond the newest N: the history stays bounded
    fold_run_logs(instance)
    stopped = [o for o in outcomes if o.interrupted]
    if stopped:
        raise RunInterrupted(f"interrupted: run {stopped[0].run_id[:8]} ({stopped[0].job}) cancelled; the judge "
                             f"answers already paid for are kept, and `dreval run` resumes from there")
    failed = [o for o in outcomes if not o.success]
    print(f"{len(outcomes) - len(failed)} run(s) succeeded, {len(failed)} failed")
    for line in na_summary(store, the_plan):
        print(line)
    judge = METER.read().minus(judged_before)
    asked = judge.done - judge.cache_hits
    if asked and judge.failures >= asked:  # the judge went away after the preflight: not a finished run
        print(f"dreval: error: every judge call of this run failed ({judge.failures} of {asked}); their scores "
              f"are N/A (provider_failure) and the next `dreval run` asks again", file=sys.stderr)
        return 1
    return 1 if failed else 0


def _counts(reasons) -> str:
    return ", ".join(f"{why} {n}" for why, n in sorted(reasons.items(), key=lambda item: (-item[1], item[0])))


def _plan_line(the_plan) -> str:
    """One line: what is due, with the partitions counted by why they are due."""
    tasks, pairs = the_plan.reasons(of_tasks=True), the_plan.reasons(of_tasks=False)
    return (f"plan: {len(the_plan.tasks)} task partition(s){f' ({_counts(tasks)})' if tasks else ''}, "
            f"{the_plan.n_system_task} system x task partition(s) in {len(the_plan.per_system)} system(s)"
            f"{f' ({_counts(pairs)})' if pairs else ''}{', leaderboard' if the_plan.leaderboard else ''}"
            f"{', publish (results.duckdb is older than the leaderboard)' if the_plan.publish else ''}")


def _plan_details(the_plan, shown: int = 6) -> list[str]:
    """For a dry run: per system (tasks first), the partitions due under each reason."""
    grouped: dict[str, dict[str, list[str]]] = {}
    for (system, task), why in the_plan.why.items():
        grouped.setdefault(system or "(tasks)", {}).setdefault(why, []).append(task)
    return [f"  {system}: {why}: {len(tasks)} ({', '.join(tasks[:shown])}{' ...' if len(tasks) > shown else ''})"
            for system, reasons in grouped.items() for why, tasks in reasons.items()]


def _mark_orphaned_runs(settings: Settings) -> None:
    """Runs an earlier dreval process left "Started" when it was killed are failed now, and said so."""
    if not (settings.dagster_home / "dagster.yaml").exists():
        return  # no instance yet: no run can be orphaned
    from .defs.orphans import mark_orphaned_runs
    from .defs.runner import open_instance
    from .operations.run_markers import forget_the_dead

    orphaned = mark_orphaned_runs(open_instance(settings))
    forget_the_dead(settings.dagster_home)
    if orphaned:
        print(f"marked {len(orphaned)} orphaned run(s) failed (their dreval process was killed or interrupted): "
              + ", ".join(run_id[:8] for run_id in orphaned))


def _preflight_judge(settings: Settings, store: Store) -> None:
    """Refuse, in one line and before anything runs, a judge that cannot answer (DREVAL_JUDGE=openai
    without a model, a wrong base URL, key or model): one cheap request per command."""
    found = _checked_judge(settings, store)
    if found:
        print(found)


def _checked_judge(settings: Settings, store: Store) -> str:
    """What `_preflight_judge` prints; raises its error."""
    from .judges.factory import check_judge
    from .judges.preflight import PreflightFailed

    try:
        return check_judge(settings.judge, store, settings.home)
    except PreflightFailed as exc:
        raise CliError(f"judge check failed, nothing was run: {exc}") from exc


def cmd_verify(args, settings: Settings) -> int:
    from .operations.verify import NothingToVerify, exit_status, lines, verify

    try:
        results = verify(_store(settings), args.benchmark)
    except NothingToVerify as exc:
        raise CliError(str(exc)) from exc
    print("\n".join(lines(results)))
    return exit_status(results)


def cmd_leaderboard(args, settings: Settings) -> int:
    from .presentation.leaderboard_view import leaderboard_tables

    if args.suite and args.suite not in SUITES:
        raise CliError(f"unknown suite {args.suite!r}; known: {', '.join(SUITES)}")
    board = _read_results(settings, "SELECT * FROM leaderboard")
    by = getattr(args, "by", None)
    if by:
        board = _broken_down(lambda sql: _read_results(settings, sql), board, args.suite, by, settings)
    # one table per suite and judge, ranked on the tasks every system scored
    print(render(leaderboard_tables(board, args.suite, by), args.format))
    return 0


def _read_results(settings: Settings, sql: str):
    """A read of the results, read-only: the published copy (never blocks and is never blocked by a
    run), the working file until one exists; nothing is created."""
    import duckdb

    published = published_path(settings.db_path)
    path = published if published.exists() else settings.db_path
    if not path.exists():
        raise CliError(f"no results yet at {settings.db_path}: run `dreval demo` or `dreval run` first")
    try:
        return Store(path).query(sql, read_only=True)
    except duckdb.CatalogException as exc:  # a home older than the table: nothing of it yet
        raise CliError(f"no results yet at {path}: run `dreval run` ({first_line(exc)})") from exc


def _broken_down(read, board, suite: str | None, by: str, settings: Settings):
    """The board's rows of `by` where a suite declares it; computed now, from metric_scores and the
    tasks' attributes, for the suites that do not (a breakdown a paper does not report is not stored)."""
    import polars as pl

    from .stages.leaderboard import TASK_ATTRIBUTE_COLUMNS, build_leaderboard, task_attributes

    attributes = task_attributes(read(f"SELECT {TASK_ATTRIBUTE_COLUMNS} FROM tasks"))
    known = sorted({a for values in attributes.values() for a in values})
    if by not in known:
        raise CliError(f"no task has the attribute {by!r}; known: {', '.join(known) or '(no tasks)'}")
    stored = set(board.filter(pl.col("breakdown").fill_null("").str.starts_with(f"{by}="))
                 .get_column("suite").to_list()) if "breakdown" in board.columns else set()
    scores = read("SELECT * FROM metric_scores")
    wanted = scores.filter(~pl.col("suite").is_in(sorted(stored)))
    if suite:
        wanted = wanted.filter(pl.col("suite") == suite)
    if wanted.height == 0:
        return board
    computed = build_leaderboard(wanted, settings.policy_map(), attributes, by=(by,))
    computed = computed.filter(pl.col("breakdown") != "")
    return pl.concat([board, computed.select(board.columns) if "breakdown" in board.columns else computed],
                     how="diagonal_relaxed")


def cmd_view(args, settings: Settings) -> int:
    from .presentation.view.pages import Site
    from .presentation.view.urls import BASE_URL_ENV, DEFAULT_PORT

    published = published_path(settings.db_path)
    if not published.exists():  # the working file is the pipeline's: the view never holds it open
        raise CliError(f"no published results yet at {published}: run `dreval demo` or `dreval run` first")
    site = Site(published)
    if args.export:
        from .presentation.view.export import export

        folder = Path(args.export).resolve()
        written = export(site, folder)
        print(f"dreval view: wrote {written} file(s) to {folder}; open {folder / 'index.html'}")
        return 0
    from .presentation.view.server import bind, serve

    sock, moved = bind(DEFAULT_PORT if args.port is None else args.port)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    if moved:
        print(f"dreval view: port {args.port or DEFAULT_PORT} is taken, serving on another one (set {BASE_URL_ENV} "
              f"for the Dagster UI's links to point here)", file=sys.stderr)
    print(f"dreval view: serving {url} (Ctrl-C stops)", flush=True)
    try:
        serve(site, sock)
    except KeyboardInterrupt:
        pass
    return 0


def cmd_sql(args, settings: Settings) -> int:
    import duckdb

    if not settings.db_path.exists():
        raise CliError(f"no results yet at {settings.db_path}: run `dreval demo` or `dreval run` first")
    published = published_path(settings.db_path)  # never blocks a run; the working file until one has finished
    try:
        frame = Store(published if published.exists() else settings.db_path).query_confined(args.query, args.timeout)
    except duckdb.InterruptException as exc:
        raise CliError(f"the query ran longer than {args.timeout:g} s and was stopped (--timeout)") from exc
    except duckdb.PermissionException as exc:
        raise CliError(f"refused: `dreval sql` reads the results database only, no files and no network "
                       f"({first_line(exc)})") from exc
    except duckdb.Error as exc:
        if "read-only mode" in str(exc):
            raise CliError(f"refused: `dreval sql` is read-only ({first_line(exc)})") from exc
        raise CliError(f"SQL failed: {first_line(exc)}") from exc
    if args.format == "csv":
        print(_nested_as_json(frame).write_csv(), end="")
    elif args.format == "json":
        print(json.dumps(frame.to_dicts(), indent=2, default=str, ensure_ascii=False))
    else:
        import polars as pl

        with pl.Config(tbl_rows=200, tbl_cols=30, fmt_str_lengths=80, tbl_width_chars=200):
            print(frame)
    return 0


def _nested_as_json(frame):
    """CSV has no lists or structs: such columns are written as JSON text, one value per cell."""
    import polars as pl

    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    return frame.with_columns(
        pl.Series(name, [None if v is None else json.dumps(v, default=str, ensure_ascii=False)
                         for v in frame.get_column(name).to_list()], dtype=pl.String)
        for name in nested)


if __name__ == "__main__":
    sys.exit(main())
