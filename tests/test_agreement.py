"""Agreement between our scores and the scores benchmarks publish: the statistics against values
worked out by hand, the stage on a 3 systems x 4 tasks comparison, the view that pairs the items,
and the asset materialised by the job `dreval run` launches."""
from __future__ import annotations

import statistics
from math import sqrt

import polars as pl
import pytest
from dagster import DagsterInstance

from dreval_assets.config import Settings
from dreval_assets.core.agreement import average_ranks, kendall_tau_b, pairwise_agreement, pearson, spearman
from dreval_assets.defs.definitions import build_definitions
from dreval_assets.defs.runner import QUIET_LOGS
from dreval_assets.stages.agreement import (NO_OVERLAP, NO_PUBLISHED, agreement_markdown, build_agreement,
                                            invalid_figures)
from dreval_assets.stages.frames import frame
from dreval_assets.store.db import Store


# -- statistics ------------------------------------------------------------------------------------

def test_pearson_by_hand():
    # deviations (-1.5, -.5, .5, 1.5) and (-3, -1, 0, 4): sxy = 11, sxx = 5, syy = 26
    assert pearson([1, 2, 3, 4], [2, 4, 5, 9]).value == pytest.approx(11 / sqrt(130))
    assert pearson([1, 2, 3], [30, 20, 10]).value == pytest.approx(-1.0)


def test_kendall_tau_b_discounts_ties():
    # pairs: 4 concordant, 0 discordant, 1 tied in x only, 1 tied in y only -> 4 / sqrt(5 * 5)
    assert kendall_tau_b([1, 2, 2, 3], [1, 3, 2, 3]).value == pytest.approx(0.8)
    # untied: 2 concordant, 1 discordant of 3 pairs
    assert kendall_tau_b([1, 2, 3], [1, 3, 2]).value == pytest.approx(1 / 3)


def test_kendall_tau_b_agrees_with_counting_every_pair():
    xs = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7]
    ys = [2, 7, 1, 8, 2, 8, 1, 8, 2, 8, 4, 5, 9, 0]
    concordant = discordant = tied_x = tied_y = 0
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            dx, dy = xs[i] - xs[j], ys[i] - ys[j]
            tied_x += dx == 0 and dy != 0
            tied_y += dy == 0 and dx != 0
            concordant += dx * dy > 0
            discordant += dx * dy < 0
    expected = (concordant - discordant) / sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    assert kendall_tau_b(xs, ys).value == pytest.approx(expected)


def test_spearman_gives_ties_their_mean_rank():
    assert average_ranks([1, 2, 2, 3]) == [1, 2.5, 2.5, 4]
    # ranks (1, 2.5, 2.5, 4) and (1, 3.5, 2, 3.5): sxy = 3.75, sxx = syy = 4.5
    assert spearman([1, 2, 2, 3], [1, 3, 2, 3]).value == pytest.approx(3.75 / 4.5)
    assert spearman([1, 2, 3, 4], [1, 4, 9, 100]).value == pytest.approx(1.0)  # monotone, not linear


@pytest.mark.parametrize("statistic", [pearson, spearman, kendall_tau_b])
def test_a_constant_series_or_too_few_items_is_null_with_the_reason(statistic):
    constant = statistic([1, 2, 3], [5, 5, 5])
    assert constant.value is None and constant.note == "published constant over 3 items"
    both = statistic([4, 4, 4], [5, 5, 5], unit="system")
    assert both.value is None and both.note == "ours and published constant over 3 systems"
    two = statistic([1, 2], [2, 1])
    assert two.value is None and two.note == "2 item(s); a correlation needs at least 3"


def test_par_counts_a_tie_as_its_own_outcome():
    counts = pairwise_agreement({
        "t1": {"a": (80, 70), "b": (60, 50), "c": (60, 55)},  # a-b agree, a-c agree, b-c: tie vs preference
        "t2": {"a": (50, 50), "b": (50, 50)},                 # both tie: agree
        "t3": {"a": (90, 10)},                                # one system: no pair
    })
    assert (counts.agreed, counts.compared) == (3, 4) and counts.rate.value == 0.75
    none = pairwise_agreement({"t3": {"a": (90, 10)}})
    assert none.rate.value is None and none.rate.note == "no task has two systems scored by both evaluators"


# -- the stage ------------------------------------------------------------------------------------

TASKS = ["mmdr.t1", "mmdr.t2", "mmdr.t3", "mmdr.t4"]
OURS = {"alpha": [90, 80, 70, 60], "beta": [70, 60, 50, 40], "gamma": [50, 40, 30, 20]}
PUBLISHED = {"alpha": [85, 75, 65, 55], "beta": [60, 70, 40, 50], "gamma": [40, 30, 45, 10]}


def pair_rows(ours: dict, published: dict, metric: str = "flae", judge: str = "judge-a", tasks=TASKS) -> list[dict]:
    """agreement_pairs rows: our value beside the published one."""
    return [{"benchmark": "mmdr", "metric": metric, "judge": judge, "system": system, "task": task,
             "scale": "0-100", "ours": float(o), "published": float(p), "difference": float(o - p),
             "published_scale": "0-100", "published_metric": metric.upper(), "published_value": p / 100,
             "file": f"reference_outputs/{system}/x.task_scores.csv", "line": i + 2}
            for system in ours for i, (task, o, p) in enumerate(zip(tasks, ours[system], published[system]))]


def only_row(agreement: pl.DataFrame, **match) -> dict:
    rows = agreement.filter(*(pl.col(k) == v for k, v in match.items()))
    assert rows.height == 1
    return rows.row(0, named=True)


def test_three_systems_on_four_tasks():
    row = only_row(build_agreement(pl.DataFrame(pair_rows(OURS, PUBLISHED))), metric="flae")
    assert (row["n_pairs"], row["n_systems"], row["n_tasks"]) == (12, 3, 4)
    ours = [v for s in OURS for v in OURS[s]]
    theirs = [v for s in PUBLISHED for v in PUBLISHED[s]]
    assert row["pearson_r"] == pytest.approx(statistics.correlation(ours, theirs))
    assert 0.8 < row["pearson_r"] < 1
    # 12 same-task pairs; only beta-gamma on t3 is ordered differently (ours 50 > 30, published 40 < 45)
    assert row["par_pairs"] == 12 and row["par"] == pytest.approx(11 / 12)
    # system means: ours (75, 55, 35), published (70, 55, 31.25)
    their_means = [70, 55, 31.25]
    centred = [m - sum(their_means) / 3 for m in their_means]
    assert row["opc"] == pytest.approx((20 * centred[0] - 20 * centred[2]) / sqrt(800 * sum(c * c for c in centred)))
    assert row["osc"] == pytest.approx(1.0)
    assert row["mean_diff"] == pytest.approx(35 / 12)  # alpha +5 x4, beta +-10, gamma 10, 10, -15, 10
    assert row["note"] == "" and invalid_figures(build_agreement(pl.DataFrame(pair_rows(OURS, PUBLISHED)))) == 0


def test_kendall_tau_over_the_items_by_hand():
    ours, published = {"a": [1, 2, 3]}, {"a": [1, 3, 2]}
    row = only_row(build_agreement(pl.DataFrame(pair_rows(ours, published, tasks=TASKS[:3]))))
    assert row["kendall_tau"] == pytest.approx(1 / 3)
    # one system: PAR and the system-level correlations have nothing to compare, and say so
    assert row["par"] is None and row["opc"] is None and row["osc"] is None
    assert row["note"] == ("par: no task has two systems scored by both evaluators; "
                           "opc, osc: 1 system(s); a correlation needs at least 3")


def test_too_few_items_are_null_never_zero_and_judges_stay_apart():
    two = pair_rows({"alpha": [90], "beta": [40]}, {"alpha": [80], "beta": [50]}, metric="race", tasks=TASKS[:1])
    other_judge = pair_rows(OURS, PUBLISHED, judge="judge-b")
    agreement = build_agreement(pl.DataFrame(two + pair_rows(OURS, PUBLISHED) + other_judge))
    assert agreement.select("metric", "judge").rows() == [("flae", "judge-a"), ("flae", "judge-b"), ("race", "judge-a")]
    race = only_row(agreement, metric="race")
    assert race["pearson_r"] is None and race["kendall_tau"] is None and race["opc"] is None and race["osc"] is None
    assert race["par"] == 1.0 and race["par_pairs"] == 1
    assert race["note"] == ("pearson_r, kendall_tau: 2 item(s); a correlation needs at least 3; "
                            "opc, osc: 2 system(s); a correlation needs at least 3")
    assert invalid_figures(agreement) == 0
    assert invalid_figures(agreement.with_columns(note=pl.lit(""))) == 1  # NULL without a reason
    assert invalid_figures(agreement.with_columns(par=pl.lit(1.5))) == 3


def test_float_noise_from_rescaling_is_not_a_preference():
    # a published 0.7 x100 is 70.00000000000001: beside another 70 it is no preference, as ours is none
    rows = pair_rows({"a": [70], "b": [70]}, {"a": [0.7 * 100], "b": [70.0]}, tasks=TASKS[:1])
    assert only_row(build_agreement(pl.DataFrame(rows)))["par"] == 1.0


def test_an_item_published_twice_counts_once():
    rows = pair_rows(OURS, PUBLISHED)
    again = {**rows[0], "published": rows[0]["published"] + 10, "file": "leaderboard.csv"}
    row = only_row(build_agreement(pl.DataFrame(rows + [again])))
    assert row["n_pairs"] == 12
    assert row["mean_diff"] == pytest.approx((35 - 5) / 12)  # alpha t1 published: mean of 85 and 95
    assert row["note"] == "1 item(s) published with different values in several rows: their mean is used"


def test_markdown_table_for_the_ui():
    agreement = build_agreement(pl.DataFrame(pair_rows(OURS, PUBLISHED) + pair_rows(
        {"alpha": [90], "beta": [40]}, {"alpha": [80], "beta": [50]}, metric="race", tasks=TASKS[:1])))
    lines = agreement_markdown(agreement).splitlines()
    assert lines[0] == "| benchmark | metric | judge | pairs | r | tau | PAR | OPC | OSC |"
    assert lines[2].startswith("| mmdr | flae | judge-a | 12 | ") and "| 0.917 |" in lines[2]
    assert lines[3] == "| mmdr | race | judge-a | 2 | n/a | n/a | 1.000 | n/a | n/a |"


# -- the view and the asset -------------------------------------------------------------------------

def metric_score_rows(ours: dict, metric: str = "flae", judge: str = "heuristic-v1") -> list[dict]:
    return [{"system": system, "task": task, "suite": "mmdr", "metric": metric, "value": None if v is None else float(v),
             "scale": "0-100", "n_items": 1, "na_reason": "provider_failure" if v is None else None,
             "detail": "", "policy": "", "judge": judge}
            for system in ours for task, v in zip(TASKS, ours[system])]


def published_rows(published: dict, metric: str = "flae") -> list[dict]:
    return [{"benchmark": "mmdr", "system": system, "task": task, "metric": metric,
             "value": None if v is None else float(v), "scale": "0-100", "published_metric": "FLAE",
             "published_value": None if v is None else v / 100, "file": f"reference_outputs/{system}/x.task_scores.csv",
             "line": i + 2, "import_id": "imp-1"}
            for system in published for i, (task, v) in enumerate(zip(TASKS, published[system]))]


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    scores = frame("metric_scores", metric_score_rows(OURS) + metric_score_rows({"alpha": [None, 1, 2, 3]}, "trace"))
    keys = sorted({(r["system"], r["task"]) for r in scores.iter_rows(named=True)})
    store.replace_partitions("metric_scores", keys, {"metric_scores": scores}, "run-1")
    return home


def insert_published(home, rows: list[dict]) -> None:
    store = Store(home / "dreval.duckdb")
    store.write(lambda con: store.insert_by_name(con, "published_scores", pl.DataFrame(rows)))


def test_the_view_pairs_only_items_both_sides_scored(home):
    published = published_rows(PUBLISHED) + published_rows({"alpha": [5, 6, None, 7]}, "trace")
    published.append({**published[0], "task": "", "line": None})  # a system-level aggregate
    published.append({**published[0], "benchmark": "drb"})        # another benchmark's score
    insert_published(home, published)
    pairs = Store(home / "dreval.duckdb").query("SELECT * FROM agreement_pairs WHERE metric = 'trace' ORDER BY task")
    # t1: ours N/A; t3: published null cell; t2 and t4 remain
    assert pairs.select("task", "ours", "published", "difference").rows() == [("mmdr.t2", 1.0, 6.0, -5.0),
                                                                              ("mmdr.t4", 3.0, 7.0, -4.0)]
    flae = Store(home / "dreval.duckdb").query("SELECT count(*) FROM agreement_pairs WHERE metric = 'flae'").item()
    assert flae == 12


def materialise(home):
    instance = DagsterInstance.ephemeral()
    job = build_definitions(Settings(home)).resolve_job_def("leaderboard_job")
    result = job.execute_in_process(instance=instance, run_config=QUIET_LOGS)
    assert result.success
    [materialisation] = [m for m in result.asset_materializations_for_node("agreement")]
    [check] = result.get_asset_check_evaluations()
    return materialisation.metadata, check


def test_the_job_dreval_run_launches_stores_the_agreement(home):
    insert_published(home, published_rows(PUBLISHED))
    metadata, check = materialise(home)
    stored = Store(home / "dreval.duckdb").query("SELECT * FROM agreement")
    row = only_row(stored, metric="flae")
    assert (row["benchmark"], row["judge"], row["n_pairs"], row["n_systems"], row["n_tasks"]) == (
        "mmdr", "heuristic-v1", 12, 3, 4)
    assert row["par"] == pytest.approx(11 / 12) and row["osc"] == pytest.approx(1.0)
    assert row["mean_diff"] == pytest.approx(35 / 12)
    assert stored.height == 1  # the trace scores have no published counterpart
    assert metadata["rows"].value == 1
    assert "| mmdr | flae | heuristic-v1 | 12 |" in metadata["agreement"].value
    assert check.check_name == "figures_in_range_or_explained" and check.passed
    assert Store(home / "dreval.duckdb").materialised("agreement")  # so `dreval run` will not plan it again


def test_no_published_scores_materialises_zero_rows_and_says_why(home):
    metadata, check = materialise(home)
    assert Store(home / "dreval.duckdb").query("SELECT count(*) FROM agreement").item() == 0
    assert metadata["rows"].value == 0 and metadata["note"].value == NO_PUBLISHED
    assert check.passed
    insert_published(home, published_rows({"someone-else": [1, 2, 3, 4]}))
    metadata, _ = materialise(home)
    assert metadata["note"].value == NO_OVERLAP


def test_published_scores_imported_after_the_agreement_make_it_due_again(home):
    from dreval_assets.operations.planner import _published_since_agreement

    store = Store(home / "dreval.duckdb")
    materialise(home)  # built before anything was published
    built = store.materialised("agreement")[("", "")]
    assert not _published_since_agreement(store, built)
    store.write(lambda con: con.execute(
        "INSERT INTO imports VALUES ('imp-2', 'mmdr', 'release', now()::TIMESTAMP + INTERVAL 1 HOUR, "
        "'{\"published_changed\": 1}')"))
    insert_published(home, [dict(r, import_id="imp-2") for r in published_rows(PUBLISHED)])
    assert _published_since_agreement(store, built)


def test_a_metric_published_only_as_system_aggregates_is_compared_with_our_leaderboard(home):
    """DRB publishes effective citations per system only (fact_result.txt): agreement pairs each
    system's published aggregate with our leaderboard number, and says it is the system level."""
    system_level = {"alpha": 70.0, "beta": 60.0, "gamma": 30.0}  # ours: means 75, 55, 35
    insert_published(home, [{**published_rows({s: [v]})[0], "task": "", "line": None}
                            for s, v in system_level.items()])
    materialise(home)
    stored = Store(home / "dreval.duckdb").query("SELECT * FROM agreement")
    row = only_row(stored, metric="flae")
    assert (row["n_pairs"], row["n_systems"], row["n_tasks"]) == (3, 3, 0)
    assert row["note"].startswith("system level") and row["osc"] == pytest.approx(1.0)
    assert row["mean_diff"] == pytest.approx(((75 - 70) + (55 - 60) + (35 - 30)) / 3)


def test_per_task_pairs_win_over_system_aggregates_of_the_same_metric():
    rows = pair_rows(OURS, PUBLISHED) + [{**pair_rows({"alpha": [75]}, {"alpha": [70]}, tasks=[""])[0]}]
    row = only_row(build_agreement(pl.DataFrame(rows)))
    assert row["n_pairs"] == 12 and "system-level aggregates left out" in row["note"]


def test_the_leaderboard_job_writes_its_published_copy_while_its_plots_are_drawn(home, monkeypatch):
    """The leaderboard step begins its plots (the plot helper's, and the rest on a thread); the published
    copy is written before the plots step takes them (its priority is the run's lowest). Materialised
    alone, as from the UI, that step draws the stored leaderboard's: the same PNGs."""
    from dagster import AssetKey

    from dreval_assets.defs import assets
    from dreval_assets.defs.assets import PLOTS_BEGUN

    def not_here(board):
        raise AssertionError("the plots step drew what the leaderboard step had begun")

    job = build_definitions(Settings(home)).resolve_job_def("leaderboard_job")
    with monkeypatch.context() as patched:
        patched.setattr(assets, "draw_leaderboard_plots", not_here)
        result = job.execute_in_process(instance=DagsterInstance.ephemeral(), run_config=QUIET_LOGS)
    assert result.success
    assert [e.step_key for e in result.all_events if e.is_step_start] == [
        "leaderboard", "agreement", "published_results", "leaderboard_plots"]
    [plotted] = result.asset_materializations_for_node("leaderboard_plots")
    assert {"plot_headline_ci", "plot_heatmap", "plot_rank_shifts", "plots"} <= set(plotted.metadata)
    assert not PLOTS_BEGUN  # taken by the run's own plots step
    drawn = {path.name: path.read_bytes() for path in (home / "plots").glob("*.png")}
    assert len(drawn) == 3
    for path in (home / "plots").glob("*.png"):
        path.unlink()
    alone = job.execute_in_process(instance=DagsterInstance.ephemeral(), run_config=QUIET_LOGS,
                                   asset_selection=[AssetKey("leaderboard_plots")])
    assert alone.success and [e.step_key for e in alone.all_events if e.is_step_start] == ["leaderboard_plots"]
    assert {path.name: path.read_bytes() for path in (home / "plots").glob("*.png")} == drawn
