"""An evaluation run's stages made on a thread ahead of its steps (stages/made_ahead.py, defs/ahead.py):
each taken once, by the run and partitions it was made for, after the stages its inputs come from;
made by the step itself otherwise; and the rows a run writes are those its steps would have made."""
import json
import sys
import threading
from pathlib import Path

import duckdb
import polars as pl
import pytest
from dagster import AssetKey, DagsterInstance

from dreval_assets.cli import main
from dreval_assets.defs import assets, claims_ahead, runner, step_work
from dreval_assets.releases.generic import load_generic
from dreval_assets.stages.made_ahead import STAGES, MadeAhead, same_rows
from dreval_assets.store.db import Store
from dreval_assets.store.registry import register_tasks

KEYS = [("a", "t1"), ("b", "t1")]


def made(stages=STAGES, keys=KEYS, run="run-1"):
    """A holder with `stages` of `run` begun and each made as 'made <stage>'."""
    holder = MadeAhead()
    ahead, mine = holder.begin(keys, run, stages)
    assert mine == list(stages)
    for stage in stages:
        ahead.put(stage, f"made {stage}")
    return holder


def test_each_stage_is_taken_once_after_the_stages_its_inputs_come_from():
    holder = made()
    assert holder.take("claim_verdicts", KEYS, "run-1") is None  # its parse was not taken yet
    assert holder.take("parsed_reports", KEYS, "run-1") == "made parsed_reports"
    assert holder.take("parsed_reports", KEYS, "run-1") is None  # once
    assert holder.take("report_judgments", KEYS, "run-1") is None  # needs the figures and the references
    assert holder.take("fetched_references", KEYS, "run-1") == "made fetched_references"
    assert holder.take("claim_verdicts", KEYS, "run-1") == "made claim_verdicts"
    assert holder.take("report_images", KEYS, "run-1") == "made report_images"
    assert holder.take("report_judgments", KEYS, "run-1") == "made report_judgments"


@pytest.mark.parametrize("case", ["other partitions", "other order", "other run", "not begun", "dropped"])
def test_otherwise_the_step_makes_its_own(case):
    holder = made(("parsed_reports",))
    keys = {"other partitions": KEYS[:1], "other order": KEYS[::-1]}.get(case, KEYS)
    run = "run-2" if case == "other run" else "run-1"  # its requests' ledger rows would name another run
    if case == "dropped":
        holder.drop("run-1")
    stage = "report_images" if case == "not begun" else "parsed_reports"
    if case == "not begun":
        assert holder.take("parsed_reports", KEYS, "run-1") == "made parsed_reports"
    assert holder.take(stage, keys, run) is None


def test_a_stage_begun_once_is_made_by_one_maker():
    """The next slice's parse begun while the slice before is judged; its run's own start then makes only
    the rest, from that parse."""
    holder = MadeAhead()
    _, first = holder.begin(KEYS, "run-1", ("parsed_reports",))
    _, then = holder.begin(KEYS, "run-1", STAGES)
    assert first == ["parsed_reports"] and then == list(STAGES[1:])


def test_a_failed_stage_is_made_by_its_step_and_nothing_after_it_is_taken():
    holder = MadeAhead()
    ahead, _ = holder.begin(KEYS, "run-1", STAGES)
    ahead.put("parsed_reports", "made")
    ahead.fail(STAGES[1:], RuntimeError("the fetcher broke"))
    assert holder.take("parsed_reports", KEYS, "run-1") == "made"
    assert holder.take("fetched_references", KEYS, "run-1") is None
    assert holder.take("report_images", KEYS, "run-1") is None


def test_the_step_waits_for_what_is_still_being_made_and_the_judge_step_takes_what_is_done_first():
    holder = MadeAhead()
    ahead, _ = holder.begin(KEYS, "run-1", STAGES)
    for stage in STAGES[:3]:
        ahead.put(stage, stage)
    threading.Timer(0.1, ahead.put, ("report_judgments", "judgments")).start()
    assert [holder.take(stage, KEYS, "run-1") for stage in STAGES[:3]] == list(STAGES[:3])
    assert holder.next_done(["claim_verdicts", "report_judgments"], KEYS, "run-1") == "report_judgments"
    assert holder.take("report_judgments", KEYS, "run-1") == "judgments"
    ahead.put("claim_verdicts", "verdicts")
    assert holder.next_done(["claim_verdicts"], KEYS, "run-1") == "claim_verdicts"


def test_the_parse_is_compared_with_the_reports_the_step_read():
    one = pl.DataFrame({"system": ["b", "a"], "task": ["t1", "t1"], "text": ["One [1].", "One [1]."]})
    assert same_rows(one, one.reverse())  # the order of rows is no matter
    assert not same_rows(one, one.with_columns(pl.lit("One [2].").alias("text")))


TASKS = [f"slice{n}" for n in range(4)]


def slice_home(home: Path, tmp_path: Path) -> Path:
    """Four tasks and two folder systems: eight partitions of one evaluation block."""
    bench = tmp_path / "bench"
    bench.mkdir(parents=True)
    (bench / "tasks.jsonl").write_text("".join(json.dumps({"id": t, "query": f"Report on {t}."}) + "\n" for t in TASKS))
    (bench / "sandbox.jsonl").write_text("".join(
        json.dumps({"task_id": t, "url": f"https://{t}.example/a", "text": f"{t} carried 41,200 passengers in 2023. " * 3})
        + "\n" for t in TASKS))
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    register_tasks(store, load_generic(bench).tasks, source="test")
    for system in ("first", "second"):
        folder = tmp_path / system
        folder.mkdir()
        for t in TASKS:
            (folder / f"{t}.md").write_text(f"# {t}\n\n{system} says {t} carried 41,200 passengers in 2023 [1]. "
                                            f"It grew [1].\n\n## References\n[1] Note https://{t}.example/a\n")
        assert main(["--home", str(home), "add-system", system, "--reports", str(folder)]) == 0
    return home


def rows(home: Path, table: str) -> list[tuple]:
    with duckdb.connect(str(home / "dreval.duckdb"), read_only=True) as con:
        columns = [c for (c,) in con.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall()
                   if c not in ("materialized_at", "run_id")]
        quoted = ", ".join(f'"{c}"' for c in columns)
        return con.execute(f"SELECT {quoted} FROM {table} ORDER BY ALL").fetchall()


def record_makers(monkeypatch) -> list[tuple[str, str]]:
    """(stage function, thread) of every stage made, by the chain ahead or by a step."""
    made_on = []
    for name in ("parsed_frames", "fetched_frames", "image_frames", "judged_pieces", "claim_verdicts_of"):
        own = getattr(step_work, name)

        def recorded(*args, own=own, name=name):
            made_on.append((name, threading.current_thread().name))
            return own(*args)

        monkeypatch.setattr(step_work, name, recorded)
        if hasattr(assets, name):
            monkeypatch.setattr(assets, name, recorded)
    return made_on


def chain(made_on: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(stage function, thread) sorted, a pool's threads by the pool's name."""
    return sorted((name, thread.split("_")[0]) for name, thread in made_on)


EVALUATED = ("parsed_reports", "report_claims", "report_images", "fetched_references", "claim_verdicts",
             "report_judgments", "metric_scores")


def test_a_run_takes_every_stage_made_ahead_and_writes_the_rows_its_steps_would_make(tmp_path, monkeypatch):
    made_on = record_makers(monkeypatch)
    ahead_home = slice_home(tmp_path / "ahead", tmp_path / "a")
    assert main(["--home", str(ahead_home), "run"]) == 0
    # every stage made by the chain (the figures in the report judgments' piece, while the claims are judged;
    # the references fetched and the claims judged as the parse hands each report on)
    assert chain(made_on) == [("claim_verdicts_of", "dreval-claims-ahead"), ("image_frames", "dreval-ahead"),
                              ("judged_pieces", "dreval-ahead"), ("parsed_frames", "dreval-ahead")]
    made_on.clear()
    monkeypatch.setattr(runner, "make_ahead", lambda *args, **kwargs: None)
    own = slice_home(tmp_path / "own", tmp_path / "b")
    assert main(["--home", str(own), "run"]) == 0
    assert chain(made_on) == [("claim_verdicts_of", "MainThread"), ("fetched_frames", "MainThread"),
                              ("image_frames", "MainThread"), ("judged_pieces", "MainThread"),
                              ("parsed_frames", "MainThread")]
    assert len(rows(own, "parsed_reports")) == 8
    for table in EVALUATED:
        assert rows(ahead_home, table) == rows(own, table), table


def test_a_stage_that_fails_ahead_is_made_by_its_step(tmp_path, monkeypatch):
    made_on = record_makers(monkeypatch)
    fetch = claims_ahead.fetch_outcomes

    def broken_ahead(*args):
        if threading.current_thread().name == "dreval-claims-fetch":
            raise RuntimeError("the fetcher broke")
        return fetch(*args)

    monkeypatch.setattr(claims_ahead, "fetch_outcomes", broken_ahead)
    home = slice_home(tmp_path / "home", tmp_path / "a")
    assert main(["--home", str(home), "run"]) == 0
    # the parse made ahead is taken; everything from the failed stage on is the steps' own
    assert chain(made_on) == [("claim_verdicts_of", "MainThread"), ("claim_verdicts_of", "dreval-claims-ahead"),
                              ("fetched_frames", "MainThread"), ("image_frames", "MainThread"),
                              ("judged_pieces", "MainThread"), ("parsed_frames", "dreval-ahead")]
    assert len(rows(home, "claim_verdicts")) > 0 and len(rows(home, "metric_scores")) > 0


def test_a_sliced_run_parses_each_next_slice_ahead_and_writes_the_rows_of_one_run(tmp_path, monkeypatch):
    made_on = record_makers(monkeypatch)
    monkeypatch.setenv("DREVAL_RUN_PARTITIONS", "2")
    sliced = slice_home(tmp_path / "sliced", tmp_path / "a")
    assert main(["--home", str(sliced), "run"]) == 0
    # four slices of two, each made ahead of its steps: the next one's parse while the one before was judged
    # (the first slice's claims judged as its parse hands them on; the others' once their parse was taken)
    assert made_on.count(("parsed_frames", "dreval-ahead")) == 4
    assert made_on.count(("fetched_frames", "dreval-ahead")) == 3
    assert [name for name, _ in made_on].count("claim_verdicts_of") == 4 and len(made_on) == 19
    assert all(thread.startswith("dreval-") for _, thread in made_on), made_on

    monkeypatch.setenv("DREVAL_RUN_PARTITIONS", "250")
    whole = slice_home(tmp_path / "whole", tmp_path / "b")
    assert main(["--home", str(whole), "run"]) == 0
    for table in EVALUATED:
        assert rows(sliced, table) == rows(whole, table), table


def test_statements_asked_ahead_are_the_next_runs_own(tmp_path, monkeypatch):
    """The next slice's statement requests, asked while the slice before it is judged, name the run that
    materialises that slice's parsed_reports (its spend in the UI counts them)."""
    sys.path.insert(0, str(Path(__file__).parent))
    from judge_answers import dreval_answer
    from loopback_llm import LoopbackLLM

    monkeypatch.setenv("DREVAL_RUN_PARTITIONS", "2")
    with LoopbackLLM(answer=dreval_answer) as llm:
        for name, value in {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_MODEL": "loopback-model",
                            "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test"}.items():
            monkeypatch.setenv(name, value)
        home = slice_home(tmp_path / "home", tmp_path / "reports")
        assert main(["--home", str(home), "run"]) == 0
    instance = DagsterInstance.from_config(str(home / "dagster"))
    materialised_in = {str(r.asset_materialization.partition): r.run_id for r in
                       instance.fetch_materializations(AssetKey("parsed_reports"), limit=100).records}
    with duckdb.connect(str(home / "dreval.duckdb"), read_only=True) as con:
        asked_in = dict(((system + "|" + task), run) for system, task, run in con.execute(
            "SELECT DISTINCT system, task, run_id FROM judge_ledger WHERE template = 'statement_extraction'").fetchall())
    assert len(set(materialised_in.values())) == 4  # four slices, four runs
    assert asked_in == materialised_in


def test_a_reports_claims_are_asked_once_its_statements_are_grounded_while_later_ones_are_asked(
        tmp_path, monkeypatch):
    """The judge's statements as the claims: the first evaluation's claims of a report are asked as soon
    as its own statements are grounded, while the last report's statements are still being answered
    (here held until a claim is asked, at most 30 s), and the rows are those the steps would make."""
    sys.path.insert(0, str(Path(__file__).parent))
    from judge_answers import dreval_answer
    from loopback_llm import LoopbackLLM

    claim_asked, answered = threading.Event(), []

    def answer(request, schema):
        text = str(request.get("messages"))
        if "<<<SOURCE" in text:
            claim_asked.set()
            answered.append("claim")
        elif "<<<UNITS" in text and "second says slice3" in text:
            claim_asked.wait(30)
            answered.append("the last report's statements")
        return dreval_answer(request, schema)

    homes = {}
    for name, ahead in (("ahead", True), ("own", False)):
        if not ahead:
            monkeypatch.setattr(runner, "make_ahead", lambda *args, **kwargs: None)
        with LoopbackLLM(answer=answer if ahead else dreval_answer) as llm:
            for key, value in {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_MODEL": "loopback-model",
                               "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test"}.items():
                monkeypatch.setenv(key, value)
            homes[name] = slice_home(tmp_path / name, tmp_path / f"reports-{name}")
            assert main(["--home", str(homes[name]), "run"]) == 0
    assert answered.index("claim") < answered.index("the last report's statements")
    assert rows(homes["ahead"], "report_claims") and rows(homes["ahead"], "claim_verdicts")
    for table in EVALUATED:
        assert rows(homes["ahead"], table) == rows(homes["own"], table), table


def test_an_interrupt_stops_what_is_made_ahead_for_runs_it_ends(monkeypatch):
    """Ctrl-C in the tasks run: the first evaluation, begun ahead, is never launched; nothing of it is
    taken any more and the requests asked for it are cancelled."""
    from types import SimpleNamespace

    from dreval_assets.stages.made_ahead import MADE_AHEAD

    begun, cancelled = [], []
    monkeypatch.setattr(runner, "make_ahead", lambda dreval, pairs, run_id, **kwargs: begun.append(run_id)
                        or MADE_AHEAD.begin(pairs, run_id, STAGES))
    monkeypatch.setattr(runner.JUDGE_LOOP, "cancel_requests", lambda: cancelled.append("cancelled"))
    planned = [runner.Launch("tasks_job", "t1", "t1", "tasks", 1),
               runner.Launch("evaluate_job", "a", "b", "slice 1", 1, (("s", "t1"),), run_id="evaluation")]
    monkeypatch.setattr(runner, "launches", lambda instance, plan: planned)
    monkeypatch.setattr(runner, "_launch", lambda defs, instance, launch, *rest, **hooks: runner.RunOutcome(
        launch.job, "", False, launch.run_id, "interrupted", interrupted=True))
    outcomes = runner.execute(SimpleNamespace(resources={"dreval": None}), None, SimpleNamespace(per_system={}))
    assert [o.job for o in outcomes] == ["tasks_job"]
    assert begun == ["evaluation"] and cancelled == ["cancelled"]
    assert MADE_AHEAD.take("parsed_reports", [("s", "t1")], "evaluation") is None


def test_the_tasks_are_read_ahead_once_every_step_of_the_last_tasks_run_wrote_them():
    """The made-ahead chain waits for the tasks runs' frames: it is let go when the last tasks run's last
    step succeeded, not when that run has ended (Dagster's bookkeeping of a run's end, ~0.5 s at 10 x 10)."""
    from types import SimpleNamespace

    from dagster import DagsterEventType

    from dreval_assets.progress import RunProgress

    written = []
    watch = runner._RunWatch(None, "r", RunProgress(live=False), None,
                             (runner.job_steps("tasks_job"), lambda: written.append("written")))

    def step(kind, key):
        watch.on_event(SimpleNamespace(dagster_event=SimpleNamespace(event_type=kind, step_key=key)))

    step(DagsterEventType.STEP_START, "tasks")
    step(DagsterEventType.STEP_SUCCESS, "tasks")
    assert written == []  # task_rubrics not written yet
    step(DagsterEventType.STEP_START, "task_rubrics")
    step(DagsterEventType.STEP_SUCCESS, "task_rubrics")
    step(DagsterEventType.STEP_SUCCESS, "task_rubrics")
    assert written == ["written"]  # once


def test_the_runner_lets_the_chain_read_the_tasks_when_the_last_tasks_run_wrote_them(monkeypatch):
    """Only the last tasks run before the evaluations is given the hook that lets the chain go on."""
    from types import SimpleNamespace

    hooked = []
    monkeypatch.setattr(runner, "make_ahead", lambda *args, **kwargs: None)
    monkeypatch.setattr(runner.JUDGE_LOOP, "close_workers", lambda wait=True: None)
    monkeypatch.setattr(runner, "_launch", lambda defs, instance, launch, *rest, written=None, **hooks:
                        hooked.append((launch.description, written is not None))
                        or runner.RunOutcome(launch.job, "", True, launch.run_id))
    planned = [runner.Launch("tasks_job", "t1", "t1", "tasks 1", 1), runner.Launch("tasks_job", "t3", "t3", "tasks 3", 1),
               runner.Launch("evaluate_job", "a", "b", "slice 1", 1, (("s", "t1"),)),
               runner.Launch("leaderboard_job", None, None, "leaderboard", 1)]
    monkeypatch.setattr(runner, "launches", lambda instance, plan: planned)
    runner.execute(SimpleNamespace(resources={"dreval": None}), None, SimpleNamespace(per_system={}))
    assert hooked == [("tasks 1", False), ("tasks 3", True), ("slice 1", False), ("leaderboard", False)]


def test_the_other_judged_pieces_begin_once_the_claims_fill_the_endpoint_or_are_done(monkeypatch):
    """The claim verdicts' requests go first: the report judgments (which decode every figure before they
    ask) and the same-statement questions begin once a claim request waits for a slot, or the claims are
    done, or after a bounded wait; never before."""
    import time

    from dreval_assets.judges.judge_loop import ENDPOINT_FULL

    order = []
    first = step_work._FirstPiece()
    claims_may_end = threading.Event()

    def claims():
        order.append("claims begin")
        claims_may_end.wait(5)
        order.append("claims end")

    gated_claims = first.marked(claims)
    later = first.after(lambda: order.append("report judgments"))
    threads = [threading.Thread(target=gated_claims), threading.Thread(target=later)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    assert order == ["claims begin"]  # the endpoint is not full and the claims are not done: it waits
    ENDPOINT_FULL.set()  # a claim request waits for a slot
    time.sleep(0.3)
    assert order == ["claims begin", "report judgments"]
    claims_may_end.set()
    for thread in threads:
        thread.join(5)

    monkeypatch.setattr(step_work, "FILL_WAIT_S", 0.2)
    first, order = step_work._FirstPiece(), []  # ENDPOINT_FULL cleared by `marked`
    gated = first.marked(lambda: order.append("claims"))
    gated()
    first.after(lambda: order.append("after the claims are done"))()
    stuck = step_work._FirstPiece()
    stuck.marked(lambda: None)  # never run: the bounded wait lets the others go
    began = time.monotonic()
    stuck.after(lambda: order.append("after the wait"))()
    assert order == ["claims", "after the claims are done", "after the wait"] and time.monotonic() - began >= 0.15
    assert step_work._FirstPiece().after(len)("ab") == 2  # without claim verdicts nothing waits


def test_a_wait_for_a_stage_ends_when_it_is_made_or_failed_and_at_once_when_no_one_makes_it():
    holder = MadeAhead()
    ahead, _ = holder.begin(KEYS, "run-1", ("parsed_reports", "fetched_references"))
    threading.Timer(0.1, ahead.put, ("fetched_references", "references")).start()
    holder.wait_for("run-1", "fetched_references")
    assert ahead.future("fetched_references").done()
    holder.wait_for("run-1", "claim_verdicts")  # not taken on by a maker: nothing to wait for
    holder.wait_for("no-such-run", "fetched_references")
    failing, _ = holder.begin(KEYS, "run-2", ("parsed_reports",))
    threading.Timer(0.1, failing.fail, (["parsed_reports"], RuntimeError("the parse failed"))).start()
    holder.wait_for("run-2", "parsed_reports")  # a failure ends the wait too; its step makes its own
    assert holder.take("parsed_reports", KEYS, "run-2") is None


def test_the_first_evaluation_starts_once_its_inputs_are_observed_and_its_references_made_ahead(monkeypatch):
    """The report inputs are observed after the tasks runs (their judge calls are not held up by it) and
    before the first evaluation; that run starts once its chain made the references, so its first steps
    do not share the process with the grounding the claims wait for. A later slice does not wait."""
    from types import SimpleNamespace

    order = []
    monkeypatch.setattr(runner, "make_ahead", lambda *args, **kwargs: None)
    monkeypatch.setattr(runner.JUDGE_LOOP, "close_workers", lambda wait=True: None)
    monkeypatch.setattr(runner, "report_input_changes", lambda instance, store, keys: order.append(("observe", keys)))
    monkeypatch.setattr(runner.MADE_AHEAD, "wait_for", lambda run_id, stage: order.append(("wait", run_id, stage)))
    monkeypatch.setattr(runner, "_launch", lambda defs, instance, launch, *rest, **hooks:
                        order.append(("launch", launch.description)) or runner.RunOutcome(launch.job, "", True,
                                                                                          launch.run_id))
    planned = [runner.Launch("tasks_job", "t1", "t1", "tasks 1", 1),
               runner.Launch("evaluate_job", "a", "a", "slice 1", 1, (("s", "t1"),), run_id="first"),
               runner.Launch("evaluate_job", "b", "b", "slice 2", 1, (("s", "t2"),), run_id="second")]
    monkeypatch.setattr(runner, "launches", lambda instance, plan: planned)
    store = SimpleNamespace(session=lambda: __import__("contextlib").nullcontext())
    runner.execute(SimpleNamespace(resources={"dreval": None}), None, SimpleNamespace(per_system={"s": ["t1", "t2"]}),
                   store=store)
    assert order == [("launch", "tasks 1"), ("observe", [("s", "t1"), ("s", "t2")]),
                     ("wait", "first", "fetched_references"), ("launch", "slice 1"), ("launch", "slice 2")]
