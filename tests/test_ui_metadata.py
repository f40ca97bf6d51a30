"""What the Dagster UI shows: the leaderboard's headline tables and plots (N/A never drawn as 0),
each partition's own figures with the run's totals once, the judge's spend per system and template,
and asset checks that describe themselves and name the rows they failed on.

The same figures on a real multi-partition run are asserted on the demo home by
`assert_partitions_describe_themselves` / `assert_leaderboard_page` (called from test_cli_e2e.py,
which already runs the demo once)."""
from __future__ import annotations

import base64
import io
import math
import os
import subprocess
import sys
import uuid
from datetime import datetime
from pathlib import Path

import polars as pl
import pytest
from PIL import Image

from dreval_assets.cli import main
from dreval_assets.defs.assets import ALL_ASSETS
from dreval_assets.defs.metadata import check_result, leaderboard_metadata, plots_metadata, spend_figures, spend_markdown
from dreval_assets.presentation.leaderboard_summary import headline_cell, headline_records, suite_markdown
from dreval_assets.presentation.leaderboard_view import leaderboard_tables
from dreval_assets.presentation.plots import heatmap_matrix, leaderboard_plots, rank_table, save_plots
from dreval_assets.presentation.view.urls import report_url
from dreval_assets.stages import checks
from dreval_assets.stages.figures import partition_figures, run_totals
from dreval_assets.stages.frames import frame
from dreval_assets.store.judge_calls import LedgerRow
from dreval_assets.store.judge_spend import run_spend

PNG = b"\x89PNG\r\n\x1a\n"


def board_row(system, suite, metric, mean, ci=(None, None), scored=4, tasks=4, rank=None, note="",
              aggregation="mean: mean over scored tasks", judge="heuristic-v1"):
    return {"system": system, "suite": suite, "metric": metric, "judge": judge, "scale": "0-100", "mean": mean,
            "ci_low": ci[0], "ci_high": ci[1], "n_tasks": tasks, "n_scored": scored,
            "coverage": scored / tasks, "shared_mean": mean, "n_shared": 3, "rank": rank, "coverage_note": note,
            "aggregation": aggregation, "validity": 1.0, "adjusted_mean": mean, "computed_at": datetime(2026, 1, 1)}


@pytest.fixture
def board() -> pl.DataFrame:
    """core: careful leads, quiet has no supported_ratio at all (N/A); dr3: the order flips, no CI."""
    return frame("leaderboard", [
        board_row("careful", "core", "supported_ratio", 90.0, (85.0, 95.0), rank=1),
        board_row("loose", "core", "supported_ratio", 40.0, (30.0, 50.0), rank=2),
        board_row("quiet", "core", "supported_ratio", None, scored=0, note="scored on 0 of 4 tasks"),
        board_row("careful", "core", "contradicted_ratio", 1.0, (0.0, 2.0)),
        board_row("loose", "core", "contradicted_ratio", 35.0, (30.0, 40.0)),
        board_row("quiet", "core", "contradicted_ratio", 0.0, (0.0, 0.0)),
        *(board_row(s, "dr3", "avg", v, rank=r, tasks=2, scored=2, aggregation="of_parts: the paper's formula")
          for s, v, r in (("careful", 70.0, 2), ("loose", 80.0, 1), ("quiet", 50.0, 3))),
    ])


def test_headline_cells_say_na_and_coverage_never_zero(board):
    core = leaderboard_tables(board)[0]
    cells = {r["system"]: headline_cell(r) for r in core.rows.filter(pl.col("metric") == "supported_ratio")
             .iter_rows(named=True)}
    assert cells == {"careful": "90.0 [85.0, 95.0] (4/4)", "loose": "40.0 [30.0, 50.0] (4/4)",
                     "quiet": "N/A (0/4) †"}
    text = suite_markdown(core)
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| rank | system | supported_ratio | contradicted_ratio")
    assert [r.split(" | ")[1] for r in rows[1:]] == ["careful", "loose", "quiet"]  # rank order, N/A last
    assert "| — | quiet | N/A (0/4) † | 0.0 [0.0, 0.0] (4/4) |" in text


def test_headline_records_one_per_suite_and_system(board):
    records = headline_records(leaderboard_tables(board))
    assert [(r["suite"], r["system"], r["rank"], r["score"], r["ci_95"]) for r in records] == [
        ("core", "careful", "1", "90.00", "[85.0, 95.0]"), ("core", "loose", "2", "40.00", "[30.0, 50.0]"),
        ("core", "quiet", "—", "N/A", "—"),
        ("dr3", "loose", "1", "80.00", "—"), ("dr3", "careful", "2", "70.00", "—"),
        ("dr3", "quiet", "3", "50.00", "—")]


def test_plots_are_pngs_and_keep_na_out_of_the_numbers(board, tmp_path):
    plots = leaderboard_plots(board)
    assert [p.name for p in plots] == ["headline_ci", "heatmap", "rank_shifts"]
    paths = save_plots(plots, tmp_path / "plots")
    for plot, path in zip(plots, paths):
        assert path.read_bytes() == plot.png and plot.png.startswith(PNG)
        with Image.open(path) as image:
            assert image.width > 300 and image.height > 150
    tables = leaderboard_tables(board)
    labels, systems, values = heatmap_matrix(tables)
    assert labels == ["core.supported_ratio", "core.contradicted_ratio", "dr3.avg"]
    assert math.isnan(values[0, systems.index("quiet")])  # grey N/A, not a dark 0
    assert values[1, systems.index("quiet")] == 0.0  # a real 0 stays 0
    ranks = {(r["system"], r["panel"]): r["rank"] for r in rank_table(tables).iter_rows(named=True)}
    assert ranks[("quiet", "core\nsupported_ratio")] is None and ranks[("loose", "dr3\navg")] == 1


@pytest.mark.parametrize("name", ["headline_ci", "heatmap", "rank_shifts"])
def test_each_plot_keeps_its_labels_in_the_figure_and_off_its_other_panels(name, board, monkeypatch):
    """The plots place their axes from their labels' extents (no layout engine): every panel with its
    labels, title and colour bar lies inside the figure, no two panels overlap, and the data area keeps
    most of the figure."""
    from dreval_assets.presentation import plots

    wide = pl.concat([board, frame("leaderboard", [  # a long system name, as real ones are
        board_row("a-much-longer-system-name-v2", "core", "supported_ratio", 60.0, (55.0, 65.0), rank=2),
        board_row("a-much-longer-system-name-v2", "dr3", "avg", 65.0, rank=2, tasks=2, scored=2,
                  aggregation="of_parts: the paper's formula")])])
    drawn = []
    monkeypatch.setattr(plots, "_png", lambda figure: drawn.append(figure) or b"")
    plots.PLOTS[name][1]([t for t in leaderboard_tables(wide) if t.ranked_by])
    [figure] = drawn
    renderer = figure.canvas.get_renderer()
    figure.draw(renderer)
    page = figure.bbox
    panels = [ax for ax in figure.axes if ax.get_visible()]
    boxes = [ax.get_tightbbox(renderer) for ax in panels]
    for box in boxes:
        assert page.x0 - 1 <= box.x0 and box.x1 <= page.x1 + 1 and page.y0 - 1 <= box.y0 and box.y1 <= page.y1 + 1
    for i, first in enumerate(boxes):
        for second in boxes[i + 1:]:
            assert not first.overlaps(second)
    data_area = sum(ax.bbox.width * ax.bbox.height for ax in panels)
    assert data_area > 0.25 * page.width * page.height  # not squeezed by its labels


def test_leaderboard_metadata_has_its_tables_and_the_plots_metadata_embeds_the_saved_pngs(board, tmp_path):
    metadata = leaderboard_metadata(board)
    assert metadata["rows"].value == 9 and metadata["systems"].value == 3
    assert {"headline", "suite_core", "suite_dr3", "view"} <= set(metadata)
    assert not any(key.startswith("plot") for key in metadata)  # leaderboard_plots' own
    records = metadata["headline"].value.records
    assert {r.data["system"]: r.data["score"] for r in records if r.data["suite"] == "core"}["quiet"] == "N/A"
    shown = plots_metadata(leaderboard_plots(board), tmp_path / "plots")
    assert shown["plots"].value == str(tmp_path / "plots")
    for name in ("headline_ci", "heatmap", "rank_shifts"):
        markdown = shown[f"plot_{name}"].value
        assert markdown.startswith("![") and "](data:image/png;base64," in markdown
        embedded = base64.b64decode(markdown.split("base64,", 1)[1].rstrip(")"))
        assert embedded == (tmp_path / "plots" / f"leaderboard_{name}.png").read_bytes()
    assert "no scores yet" in leaderboard_metadata(board.clear())["note"].value
    assert leaderboard_plots(board.clear()) == []
    assert "no scores yet" in plots_metadata([], tmp_path / "none")["note"].value and not (tmp_path / "none").exists()


def verdict(system, task, claim, label, na_reason=None):
    return {"system": system, "task": task, "claim_id": claim, "source": "u", "verdict": label, "score": None,
            "evidence": "", "reason": "", "na_reason": na_reason, "judge": "j", "template": "x",
            "template_hash": "h", "model": None, "temperature": None, "seed": None, "cache_key": None,
            "batch_size": 1, "source_truncated": False, "origin": "cited", "search_query": None}


def test_partition_figures_are_each_partitions_own():
    verdicts = frame("claim_verdicts", [verdict("a", "t1", "c1", "supported"), verdict("a", "t1", "c2", "contradicted"),
                                        verdict("a", "t1", "c3", "contradicted"), verdict("a", "t2", "c1", "partial")])
    keys = [("a", "t1"), ("a", "t2"), ("a", "t3")]
    figures = partition_figures("claim_verdicts", {"claim_verdicts": verdicts}, keys)
    assert figures[("a", "t1")] == {"rows_claim_verdicts": 3, "n_supported": 1, "n_partial": 0, "n_unsupported": 0,
                                    "n_contradicted": 2, "n_unknown": 0}
    assert figures[("a", "t2")]["n_contradicted"] == 0 and figures[("a", "t2")]["n_partial"] == 1
    assert set(figures[("a", "t3")].values()) == {0}  # wrote nothing: zeros, not the run's numbers
    totals = run_totals(figures)
    assert totals["partitions"] == 3 and totals["rows_claim_verdicts"] == 4 and totals["n_contradicted"] == 2


def test_metric_score_figures_list_the_partitions_headline_scores():
    def score(task, suite, metric, value, na_reason=None):
        return {"system": "a", "task": task, "suite": suite, "metric": metric, "value": value, "scale": "0-100",
                "n_items": 1, "na_reason": na_reason, "detail": "", "policy": "", "judge": "j"}

    scores = frame("metric_scores", [score("t1", "core", "supported_ratio", 80.0),
                                     score("t1", "dr3", "avg", None, "pipeline_failure"),
                                     score("t2", "core", "supported_ratio", 20.0)])
    figures = partition_figures("metric_scores", {"metric_scores": scores}, [("a", "t1"), ("a", "t2")])
    assert figures[("a", "t1")]["na"] == 1 and figures[("a", "t1")]["suites"] == "core, dr3"
    assert "| core | supported_ratio | 80.00 |  |" in figures[("a", "t1")]["scores"]
    assert "| dr3 | avg | N/A | pipeline_failure |" in figures[("a", "t1")]["scores"]
    assert "20.00" in figures[("a", "t2")]["scores"] and "80.00" not in figures[("a", "t2")]["scores"]


def ledger(system, task, template, cache_hit=False, cost=0.01, run_id="r1", asset="claim_verdicts"):
    return LedgerRow(call_id=str(uuid.uuid4()), called_at=datetime(2026, 1, 1), run_id=run_id, asset=asset,
                     system=system, task=task, judge_id="j", model="m", template=template, template_hash="h",
                     cache_key=str(uuid.uuid4()), cache_hit=cache_hit, outcome="cache_hit" if cache_hit else "ok",
                     attempts=1, validation_retries=0, tokens_in=100, tokens_out=10,
                     cost=0.0 if cache_hit else cost, latency_s=0.1, error="")


def test_judge_spend_per_partition_system_and_template(calls):
    calls.record([ledger("a", "t1", "claim_verdicts_batch"), ledger("a", "t1", "claim_verdicts_batch", cache_hit=True),
                  ledger("b", "t1", "claim_verdicts_batch", cost=None), ledger(None, None, "same_statement"),
                  ledger("a", "t1", "claim_verdicts_batch", run_id="other-run"),
                  ledger("a", "t1", "checklist_items", asset="report_judgments")])
    spend = run_spend(calls.store, "r1", "claim_verdicts")
    assert spend.select("system", "task", "template", "requests", "calls", "cache_hits").rows() == [
        ("", "", "same_statement", 1, 1, 0), ("a", "t1", "claim_verdicts_batch", 2, 1, 1),
        ("b", "t1", "claim_verdicts_batch", 1, 1, 0)]
    assert "core.supported_ratio" in spend.filter(pl.col("system") == "a").item(0, "metrics")
    own = spend_figures(spend.filter((pl.col("system") == "a") & (pl.col("task") == "t1")))
    assert own["judge_requests"] == 2 and own["judge_calls"] == 1 and own["judge_cache_hit_rate"] == 0.5
    assert own["judge_cost"] == 0.01
    assert spend_figures(spend.filter(pl.col("system") == "b"))["judge_cost"] == "unpriced"
    table = spend_markdown(spend)
    assert "| (shared by systems) | same_statement |" in table and "| b | claim_verdicts_batch |" in table
    assert "1 unpriced" in table


def test_a_failing_check_names_its_rows():
    verdicts = frame("claim_verdicts", [verdict("a", "t1", "c1", "supported"), verdict("a", "t2", "c7", "true"),
                                        verdict("b", "t1", "c3", "unknown")])
    failing = checks.invalid_verdicts(verdicts).vstack(checks.unknown_without_reason(verdicts))
    result = check_result("verdict_labels_valid", failing, asset="claim_verdicts")
    assert not result.passed and result.metadata["failures"].value == 2
    rows = result.metadata["first_failing_rows"].value
    assert "| a | t2 | c7 | u | true |" in rows and "| b | t1 | c3 | u | unknown |" in rows
    assert "c1" not in rows
    assert result.metadata["failing_partitions"].value == "a|t2, b|t1"
    assert result.metadata["what"].value == checks.CHECKS["verdict_labels_valid"].description
    passed = check_result("verdict_labels_valid", checks.invalid_verdicts(verdicts.head(1)), asset="claim_verdicts")
    assert passed.passed and "first_failing_rows" not in passed.metadata


def test_every_asset_check_carries_a_description():
    specs = [spec for a in ALL_ASSETS for spec in getattr(a, "check_specs", [])]
    assert len(specs) >= 8
    for spec in specs:
        assert spec.description and len(spec.description) > 30, spec.name


# -- on a real demo home (called from test_cli_e2e.py, whose module fixture ran the demo once) -------------

def materialisations(home: Path, asset: str) -> list:
    from dagster import AssetKey, DagsterInstance

    instance = DagsterInstance.from_config(str(home / "dagster"))
    return instance.fetch_materializations(AssetKey(asset), limit=1000).records


def assert_partitions_describe_themselves(home: Path) -> None:
    """Each partition's materialisation carries its own rows' figures; each run's totals appear once."""
    from dreval_assets.store.db import Store

    store = Store(home / "dreval.duckdb")
    expected = {
        "claim_verdicts": "SELECT system, task, count(*) AS rows_claim_verdicts, "
                          "count(*) FILTER (WHERE verdict = 'contradicted') AS n_contradicted "
                          "FROM claim_verdicts GROUP BY ALL",
        "report_judgments": "SELECT system, task, count(*) AS rows_report_judgments FROM report_judgments GROUP BY ALL",
        "metric_scores": "SELECT system, task, count(*) AS rows_metric_scores, "
                         "count(*) FILTER (WHERE value IS NULL) AS na FROM metric_scores GROUP BY ALL",
    }
    for asset, sql in expected.items():
        counted = store.query(sql)
        truth = {(r.pop("system"), r.pop("task")): r for r in counted.iter_rows(named=True)}
        nothing = {name: 0 for name in counted.columns[2:]}  # a partition that wrote no row shows zeros
        latest: dict = {}
        for record in materialisations(home, asset):  # newest first
            latest.setdefault(record.asset_materialization.partition, record)
        shown = {}
        for partition, record in latest.items():
            system, task = str(partition).split("|")
            metadata = record.asset_materialization.metadata
            shown[(system, task)] = {name: metadata[name].value for name in nothing}
            assert metadata["view"].value == report_url(system, task)  # the partition's page in `dreval view`
        assert shown == {key: truth.get(key, nothing) for key in shown}, asset
        assert set(truth) <= set(shown) and len(shown) == 24
        figures = {tuple(v.values()) for v in shown.values()}
        assert len(figures) > 3, f"{asset}: partitions should not all show the same figures"
        runs: dict = {}  # every materialisation of each run (a later run may have redone some partitions)
        for record in materialisations(home, asset):
            runs.setdefault(record.run_id, []).append(record.asset_materialization.metadata)
        for run_id, events in runs.items():
            totals = [m["run_totals"].value for m in events if "run_totals" in m]
            assert len(totals) == 1, f"{asset} run {run_id}: run totals on {len(totals)} partitions"
            assert f"| partitions | {len(events)} |" in totals[0] and "Run totals" in totals[0]


def assert_leaderboard_page(home: Path) -> None:
    """The leaderboard's latest materialisation: headline table, per-suite tables; its plots' (on disk)."""
    metadata = materialisations(home, "leaderboard")[0].asset_materialization.metadata
    suites = {r.data["suite"] for r in metadata["headline"].value.records}
    assert {"core", "tvir", "mmdr", "dr3", "wlc", "drb", "miroeval"} <= suites
    assert all(f"suite_{s}" in metadata for s in suites)
    # every suite's table inline alike (Dagster hides Markdown over 1,000 characters behind a button)
    assert all(len(metadata[f"suite_{s}"].value) <= 1000 for s in suites)
    assert metadata["view"].value.endswith("/index.html")
    mmdr = [r.data for r in metadata["headline"].value.records if r.data["suite"] == "mmdr"]
    # ranked by its headline whatever the judge: the offline judge cannot rank Overall, so nobody is ranked
    assert mmdr and {r["metric"] for r in mmdr} == {"overall"} and all(r["rank"] == "—" for r in mmdr)
    # the offline judge cannot see the MOSAIC items of two systems: their Overall is not comparable, not N/A
    assert "not comparable" in metadata["suite_mmdr"].value
    plotted = materialisations(home, "leaderboard_plots")[0].asset_materialization.metadata
    for name in ("headline_ci", "heatmap", "rank_shifts"):
        path = home / "plots" / f"leaderboard_{name}.png"
        with Image.open(io.BytesIO(path.read_bytes())) as image:
            image.verify()
        assert base64.b64encode(path.read_bytes()).decode() in plotted[f"plot_{name}"].value


def test_a_run_whose_partitions_wrote_no_row_still_shows_every_figure_at_zero():
    from dreval_assets.stages.figures import partition_figures
    from dreval_assets.stages.frames import frame

    shown = partition_figures("claim_verdicts", {"claim_verdicts": frame("claim_verdicts", [])},
                              [("careful-scholar", "tvir.100001")])
    assert shown[("careful-scholar", "tvir.100001")] == {
        "rows_claim_verdicts": 0, "n_supported": 0, "n_partial": 0, "n_unsupported": 0, "n_contradicted": 0,
        "n_unknown": 0}


def test_a_warm_up_in_the_background_changes_no_plot(board):
    """matplotlib is made ready on a thread while a judge step waits (`plots.start_warm_up`, once per
    process); plotting waits for it, and the plots are byte for byte those made without it."""
    from dreval_assets.presentation import plots

    before = [p.png for p in leaderboard_plots(board)]
    warming = plots._WarmUp()
    warming.start()
    warming.start()  # once: a second start is no second thread
    thread = warming._thread
    warming.wait_done()
    assert thread is not None and warming._thread is thread and not thread.is_alive()
    assert [p.png for p in leaderboard_plots(board)] == before


@pytest.mark.parametrize("until", ["the endpoint is full", "the step ends"])
def test_a_judge_step_gives_the_process_its_spare_work_once_its_requests_wait_on_the_endpoint(until, monkeypatch):
    """The runner hands a run's watch the work to do while a step waits on the judge (matplotlib made
    ready when a leaderboard will plot): not at the step's start, whose requests need the CPU, but once
    requests have waited for free slots of the endpoint for a while with this process mostly idle, or
    when the step ends without that; other steps' starts do not start it."""
    import asyncio
    import threading
    from types import SimpleNamespace

    from dagster import DagsterEventType

    from dreval_assets.core.models import ClaimVerdict
    from dreval_assets.defs import runner
    from dreval_assets.judges.base import JudgmentRequest
    from dreval_assets.judges.judge_call import PreparedCall
    from dreval_assets.judges.openai_calls import EndpointCalls, endpoint_of
    from dreval_assets.judges.openai_config import OpenAIJudgeConfig
    from dreval_assets.progress import RunProgress
    from loopback_llm import LoopbackLLM

    monkeypatch.setattr(runner, "QUIET_FOR_S", 0.25)  # full and quiet at one check: the work starts
    started = threading.Event()
    watch = runner._RunWatch(instance=None, run_id="r", progress=RunProgress(live=False), spare_time=started.set)

    def step(kind, step_key):
        return SimpleNamespace(dagster_event=SimpleNamespace(event_type=kind, step_key=step_key))

    with LoopbackLLM(answer=lambda request, schema: {"verdict": "supported"}, latency_s=0.3) as llm:
        config = OpenAIJudgeConfig(model="m", base_url=llm.base_url, api_key="k", concurrency=2, worker="off")
        endpoint, caller = endpoint_of(config), EndpointCalls(config)
        call = PreparedCall(JudgmentRequest("t", {}, ClaimVerdict), [{"role": "user", "content": "x"}],
                            "h", "k", 1, "m", 100, 0.0)

        async def at_once(n):  # two slots: the others wait for one
            return await asyncio.gather(*(caller.call(call, endpoint.client(), endpoint.semaphore,
                                                      endpoint.limiter) for _ in range(n)))

        asyncio.run(at_once(1))  # the client made and warm: what follows costs this process little CPU
        watch.on_event(step(DagsterEventType.STEP_START, "parsed_reports"))
        watch.on_event(step(DagsterEventType.STEP_SUCCESS, "parsed_reports"))
        watch.on_event(step(DagsterEventType.STEP_START, "claim_verdicts_and_report_judgments"))
        assert not started.wait(0.3)  # the step's requests are still being prepared and sent
        if until == "the endpoint is full":
            assert all(o.answer is not None for o in asyncio.run(at_once(6)))
            assert started.wait(5)
        else:
            watch.on_event(step(DagsterEventType.STEP_SUCCESS, "claim_verdicts_and_report_judgments"))
            assert started.wait(5)


@pytest.fixture
def plot_helper(monkeypatch):
    from dreval_assets.helper_process import HelperProcess
    from dreval_assets.presentation import plots

    helper = HelperProcess()
    monkeypatch.setattr(plots, "PLOT_HELPER", helper)
    yield helper
    helper.close()


def test_plots_drawn_by_the_helper_process_are_those_drawn_here(board, plot_helper):
    """The command's plot helper (`plots.start_plot_helper`) draws the headline plot and the rank shifts while
    this process draws the heatmap: the same bytes, in the same order, as all three drawn here."""
    from dreval_assets.presentation import plots

    here = leaderboard_plots(board)
    plot_helper.start(plots.warm_up)
    there = leaderboard_plots(board)
    assert [(p.name, p.title, p.png) for p in there] == [(p.name, p.title, p.png) for p in here]
    assert not plot_helper.started  # ended once it has drawn: its memory is not held past the leaderboard


def test_plots_are_drawn_here_when_the_helper_process_is_gone(board, plot_helper):
    from dreval_assets.presentation import plots

    here = [p.png for p in leaderboard_plots(board)]
    plot_helper.start()
    plot_helper.submit(os._exit, 1).exception(timeout=60)  # its process dies
    assert [p.png for p in leaderboard_plots(board)] == here
    assert not plot_helper.started  # dropped: the next plots are drawn here at once
    assert [p.png for p in leaderboard_plots(board)] == here
    assert plots.PLOT_HELPER is plot_helper


def test_what_the_helper_has_not_begun_is_done_by_the_process_waiting_for_it():
    import time

    from dreval_assets.helper_process import HelperProcess

    helper = HelperProcess()
    helper.start()
    try:
        helper.submit(os.getpid).result(timeout=60)  # started and serving
        # what it runs and what its pool has handed it ahead (up to two calls): long enough that a loaded
        # machine does not end them first, and enough of them that no later call is handed ahead
        busy = [helper.submit(time.sleep, 3.0) for _ in range(3)]
        waiting = [helper.submit(os.getpid) for _ in range(3)]
        assert helper.result_or_here(waiting[0], os.getpid) == os.getpid()  # done here, not waited for
        # the newest first, so all three were done here while the helper still slept
        assert [future.result() for future in waiting] == [os.getpid()] * 3
        assert not any(future.done() for future in busy)
        for future in busy:
            future.result(timeout=60)
        begun = helper.submit(os.getpid)  # the helper is free again: it runs it
        begun.result(timeout=60)
        assert helper.result_or_here(begun, os.getpid) != os.getpid()
    finally:
        helper.close()


def test_a_helper_closed_without_waiting_is_ended_by_the_next_close():
    """The leaderboard step lets the helper exit while it goes on; the command's end waits for that exit."""
    from dreval_assets.helper_process import HelperProcess

    helper = HelperProcess()
    helper.start()
    pid = helper.submit(os.getpid).result(timeout=60)
    helper.close(wait=False)
    assert not helper.started and helper.submit(abs, -1) is None  # the caller does the work from now on
    helper.close()
    with pytest.raises(ProcessLookupError):  # ended and reaped
        os.kill(pid, 0)


def test_a_helper_process_ends_with_the_process_that_started_it():
    """A command ends with `os._exit` (and a killed one without a word): the helper holds the command's
    stdout, a pipe its caller reads to the end, only until it sees its parent gone."""
    code = ("from dreval_assets.helper_process import HelperProcess; import os; h = HelperProcess(); h.start(); "
            "assert h.submit(abs, -2).result() == 2; print('helped', flush=True); os._exit(0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.stdout == "helped\n", done.stderr


def test_only_the_commands_own_process_starts_the_plot_helper(home, monkeypatch):
    """A run from `main` (a test, a library user) draws its plots itself: a patched plotting function is the
    one that draws, and no process is left behind."""
    from dreval_assets.helper_process import HelperProcess
    from dreval_assets.presentation import plots

    helper = HelperProcess()
    monkeypatch.setattr(plots, "PLOT_HELPER", helper)
    assert main(["--home", str(home), "demo"]) == 0
    assert not helper.started


def test_the_commands_judge_workers_end_after_the_last_run_that_judges(monkeypatch):
    """In the command's own process (only there) the judge workers end once no later run judges, and the
    runs' caches are emptied, so neither is held beside the closing runs' memory peak."""
    from dreval_assets.defs import runner

    ended = []
    monkeypatch.setattr(runner.JUDGE_LOOP, "close_workers", lambda wait=True: ended.append("judge workers"))
    monkeypatch.setattr(runner, "_launch", lambda defs, instance, launch, *rest, **hooks: ended.append(launch.job) or
                        runner.RunOutcome(launch.job, "", True, "r"))
    planned = [runner.Launch(job, None, None, job, 1) for job in
               ("tasks_job", "evaluate_job", "evaluate_job", "leaderboard_job")]
    monkeypatch.setattr(runner, "launches", lambda instance, plan: planned)
    monkeypatch.setattr(runner, "_spare_work", lambda *args: None)
    from dreval_assets.core.evidence_match import content_tokens
    from dreval_assets.defs.resources import RUN_READS

    def read_by_the_runs():
        content_tokens("The tidal barrage opened in 2031.")
        RUN_READS.keep("r", "tasks", [("t",)], {"tasks": pl.DataFrame({"task": ["t"]})})

    read_by_the_runs()
    runner.execute(None, None, None, command_process=True)
    assert ended == ["tasks_job", "evaluate_job", "evaluate_job", "judge workers", "leaderboard_job"]
    # what the judging runs cached is let go for the closing runs
    assert content_tokens.cache_info().currsize == 0 and not RUN_READS.frames and RUN_READS.size == 0
    ended.clear()
    read_by_the_runs()
    runner.execute(None, None, None)
    assert ended == ["tasks_job", "evaluate_job", "evaluate_job", "leaderboard_job"]
    assert content_tokens.cache_info().currsize == 1  # a test's or a library user's process keeps its caches


def test_between_two_evaluation_slices_the_first_ones_frames_are_let_go(monkeypatch):
    """A sliced evaluation: before each next slice the frames the last one's steps shared are dropped and
    the heap trimmed, so the next slice's peak does not stand on them; not after the last slice."""
    from dreval_assets.defs import runner
    from dreval_assets.defs.resources import RUN_READS

    seen = []

    def launch(defs, instance, launch, *rest, **hooks):
        seen.append((launch.job, len(RUN_READS.frames)))
        RUN_READS.keep(launch.run_id, "tasks", [("t",)], {"tasks": pl.DataFrame({"task": ["t"]})})
        return runner.RunOutcome(launch.job, "", True, launch.run_id)

    monkeypatch.setattr(runner, "_launch", launch)
    monkeypatch.setattr(runner, "_trim_heap", lambda: seen.append("trimmed"))
    planned = [runner.Launch(job, None, None, job, 1) for job in
               ("tasks_job", "evaluate_job", "evaluate_job", "evaluate_job", "leaderboard_job")]
    monkeypatch.setattr(runner, "launches", lambda instance, plan: planned)
    monkeypatch.setattr(runner, "_spare_work", lambda *args: None)
    runner.execute(None, None, None)
    assert seen == [("tasks_job", 0), ("evaluate_job", 1), "trimmed", ("evaluate_job", 0), "trimmed",
                    ("evaluate_job", 0), ("leaderboard_job", 1)]


def test_the_plot_helper_starts_with_the_judge_step_of_a_one_run_evaluation(monkeypatch):
    """The helper lives from the evaluation's judge step until it has drawn, and only when the evaluation is
    one run (a sliced one's last slice is its memory peak); matplotlib is warmed here in any case; only the
    command's own process starts it."""
    from types import SimpleNamespace

    from dreval_assets.defs import runner

    done = []
    monkeypatch.setattr(runner, "start_plot_helper", lambda: done.append("helper"))
    monkeypatch.setattr(runner, "start_warm_up", lambda: done.append("warm-up"))
    monkeypatch.setattr(runner, "make_ahead", lambda dreval, pairs, run_id, through="report_judgments",
                        tasks_written=None: done.append(f"ahead {pairs[0][1]}"
                                                        f"{' from the start' if tasks_written else ''}"))
    monkeypatch.setattr(runner.JUDGE_LOOP, "close_workers", lambda wait=True: None)

    def launch(defs, instance, launch, progress, store, spare_time, **hooks):
        done.append(launch.description)
        if spare_time is not None and launch.job == "evaluate_job":  # its judge step starts
            spare_time()
        return runner.RunOutcome(launch.job, "", True, "r")

    monkeypatch.setattr(runner, "_launch", launch)
    defs = SimpleNamespace(resources={"dreval": None})
    one = [runner.Launch("evaluate_job", "a", "b", "slice 1", 1, (("s", "t1"),)),
           runner.Launch("leaderboard_job", None, None, "leaderboard", 1)]
    two = one[:1] + [runner.Launch("evaluate_job", "c", "d", "slice 2", 1, (("s", "t2"),))] + one[1:]
    for planned, command_process, expected in (
            (one, True, ["ahead t1 from the start", "ahead t1", "slice 1", "warm-up", "helper", "leaderboard"]),
            (one, False, ["ahead t1 from the start", "ahead t1", "slice 1", "warm-up", "leaderboard"]),
            (two, True, ["ahead t1 from the start", "ahead t1", "slice 1", "ahead t2", "warm-up", "ahead t2",
                         "slice 2", "warm-up", "leaderboard"])):
        done.clear()
        monkeypatch.setattr(runner, "launches", lambda instance, plan, planned=planned: planned)
        runner.execute(defs, None, SimpleNamespace(per_system={}), command_process=command_process)
        assert done == expected, (len(planned), command_process)


def test_each_metric_scores_partition_lists_its_suites_headline_scores_in_order_and_no_other():
    """The `scores` table of a metric_scores partition: each known suite's first headline metrics in the
    suite's order (suites in name order), N/A with its reason; other metrics and unknown suites are not
    listed, and a partition with none of them shows the header alone."""
    def row(task, suite, metric, value, na_reason=None):
        return {"system": "a", "task": task, "suite": suite, "metric": metric, "value": value, "na_reason": na_reason}

    scores = pl.DataFrame([row("t1", "wlc", "broad", 40.0), row("t1", "drb", "fact_accuracy", None, "judge_limit"),
                           row("t1", "drb", "race", 71.234), row("t1", "drb", "a_metric_not_shown", 5.0),
                           row("t1", "not_a_suite", "overall", 1.0), row("t1", "wlc", "writing", 60.0),
                           row("t2", "drb", "a_metric_not_shown", 5.0)])
    figures = partition_figures("metric_scores", {"metric_scores": scores}, [("a", "t1"), ("a", "t2")])
    assert str(figures[("a", "t1")]["scores"]).splitlines() == [
        "| suite | metric | value | N/A reason |", "|---|---|---|---|",
        "| drb | race | 71.23 |  |", "| drb | fact_accuracy | N/A | judge_limit |",
        "| wlc | writing | 60.00 |  |", "| wlc | broad | 40.00 |  |"]
    assert str(figures[("a", "t2")]["scores"]).splitlines() == ["| suite | metric | value | N/A reason |",
                                                                "|---|---|---|---|"]
    assert figures[("a", "t1")]["na"] == 1 and figures[("a", "t1")]["suites"] == "drb, not_a_suite, wlc"


def test_each_partition_gets_its_own_judge_spend_from_the_runs_ledger_rows():
    from dreval_assets.defs.metadata import _spend_by_partition

    def row(system, task, template, requests, cost):
        return {"system": system, "task": task, "template": template, "metrics": "", "requests": requests,
                "calls": requests, "cache_hits": 0, "failures": 0, "tokens_in": 10 * requests, "tokens_out": None,
                "cost": cost, "unpriced": 0 if cost is not None else requests}

    spend = pl.DataFrame([row("a", "t1", "x", 2, 0.5), row("a", "t1", "y", 1, 0.25), row("b", "t1", "x", 3, None),
                          row("", "", "batch", 4, 1.0)])
    by = _spend_by_partition(spend, [("a", "t1"), ("b", "t1"), ("a", "t2")])
    assert spend_figures(by[("a", "t1")]) == spend_figures(spend.filter((pl.col("system") == "a")))
    assert spend_figures(by[("a", "t1")])["judge_requests"] == 3 and spend_figures(by[("a", "t1")])["judge_cost"] == 0.75
    assert spend_figures(by[("b", "t1")])["judge_cost"] == "unpriced" and by[("a", "t2")] == []
    assert spend_figures(by[("a", "t2")])["judge_requests"] == 0 and spend_figures(by[("a", "t1")])["judge_tokens_out"] == 0
    assert spend_markdown(by[("a", "t1")], by_system=False) == spend_markdown(spend.head(2), by_system=False)
