"""The leaderboard never ranks a system on a fraction of its tasks unmarked, and never mixes judges.

Frames are built by hand: `score` writes the metric_scores rows a stage would write (a value, or N/A
with its reason), `build_leaderboard` makes the rows users read, and the view prints them.
"""
from __future__ import annotations

import json

import polars as pl
import pytest

from dreval_assets.cli import main
from dreval_assets.presentation.leaderboard_view import MARK, leaderboard_tables, render, wide_leaderboard
from dreval_assets.stages.frames import frame
from dreval_assets.stages.leaderboard import build_leaderboard
from dreval_assets.store.db import Store

TASKS = ["t1", "t2", "t3", "t4"]


def score(system: str, values: list[float | None], metric: str = "cs", suite: str = "tvir", judge: str = "judge-a",
          reason: str = "provider_failure", tasks: list[str] = TASKS) -> list[dict]:
    return [{"system": system, "task": task, "suite": suite, "metric": metric, "value": value, "scale": "0-100",
             "n_items": 1, "na_reason": None if value is not None else reason,
             "detail": "" if value is not None else "every judge call failed", "policy": "", "judge": judge}
            for task, value in zip(tasks, values)]


def board_of(*groups: list[dict]) -> pl.DataFrame:
    return build_leaderboard(frame("metric_scores", [row for group in groups for row in group]))


def row(board: pl.DataFrame, system: str, metric: str = "cs", judge: str = "judge-a") -> dict:
    rows = board.filter((pl.col("system") == system) & (pl.col("metric") == metric) & (pl.col("judge") == judge))
    assert rows.height == 1
    return rows.row(0, named=True)


# A system whose judge failed on its two hardest tasks: higher mean over what was scored, worse on
# the tasks both systems were scored on.
HALF = score("half-covered", [82.0, 90.0, None, None])
FULL = score("fully-covered", [85.0, 95.0, 40.0, 50.0])


def test_mean_is_over_scored_tasks_only_with_its_coverage():
    half = row(board_of(HALF, FULL), "half-covered")
    assert half["mean"] == pytest.approx(86.0) and half["n_scored"] == 2 and half["n_tasks"] == 4
    assert half["coverage"] == pytest.approx(0.5)


def test_ranks_go_to_the_covering_systems_and_the_shared_comparison_is_its_own_column():
    board = board_of(HALF, FULL)
    half, full = row(board, "half-covered"), row(board, "fully-covered")
    assert full["mean"] == pytest.approx(67.5) and half["mean"] > full["mean"]  # the raw means would mislead
    assert half["n_shared"] == full["n_shared"] == 2
    assert half["shared_mean"] == pytest.approx(86.0) and full["shared_mean"] == pytest.approx(90.0)
    assert (full["rank"], half["rank"]) == (1, None)  # a mean over 2 of 4 tasks is listed, not ranked
    assert half["coverage_note"] == ("scored on 2 of the 4 tasks other systems were scored on "
                                     "(2 provider_failure); not ranked (ranks are over the systems scored on all 4); "
                                     "its cs on the 2 task(s) all 2 systems scored is the shared column")
    assert full["coverage_note"] == ""


def test_ranks_follow_the_means_shown_among_covering_systems():
    """A system covering few tasks re-ranks nobody: ranked rows are in the order of their means."""
    board = board_of(score("high", [90.0, 92.0, 88.0, 91.0]), score("mid", [80.0, 85.0, 95.0, 70.0]),
                     score("lucky", [99.0, None, None, None]))
    ranks = {s: row(board, s)["rank"] for s in ("high", "mid", "lucky")}
    assert ranks == {"high": 1, "mid": 2, "lucky": None}
    table, = leaderboard_tables(board)
    assert wide_leaderboard(table).get_column("system").to_list() == ["high", "mid", "lucky"]


def test_printed_table_ranks_the_covering_systems_and_marks_the_partial_one():
    table, = leaderboard_tables(board_of(HALF, FULL))
    wide = wide_leaderboard(table)
    assert wide.get_column("system").to_list() == ["fully-covered", "half-covered"]
    assert wide.get_column("rank").to_list() == ["1", "—"]
    assert wide.get_column("tvir.cs").to_list() == ["67.5 (4/4)", f"86.0 (2/4) {MARK}"]
    assert wide.get_column("tvir.cs on 2 shared").to_list() == ["90.0", "86.0"]
    text = render([table], "table")
    assert ("judge judge-a; ranked by tvir.cs among the 1 system(s) scored on all its tasks; 1 with partial "
            "coverage listed unranked") in text.splitlines()[0]
    assert "half-covered tvir.cs: scored on 2 of the 4 tasks" in text


def test_no_system_leads_on_partial_coverage():
    """Whatever the numbers, a system scored on fewer tasks follows the ranked ones, marked."""
    lucky = score("lucky", [99.0, None, None, None])  # better than everyone on its one task
    board = board_of(lucky, FULL, score("steady", [70.0, 70.0, 70.0, 70.0]))
    table, = leaderboard_tables(board)
    wide = wide_leaderboard(table)
    cells = dict(zip(wide.get_column("system"), wide.get_column("tvir.cs")))
    assert wide.get_column("system").to_list() == ["steady", "fully-covered", "lucky"]  # 70.0 > 67.5, then lucky
    assert cells["lucky"].endswith(MARK) and "(1/4)" in cells["lucky"]  # says it was scored on 1 of 4
    assert not cells["steady"].endswith(MARK) and not cells["fully-covered"].endswith(MARK)
    assert wide.get_column("tvir.cs on 1 shared").to_list() == ["70.0", "85.0", "99.0"]
    assert "among the 2 system(s) scored on all its tasks" in render([table], "md")


def test_a_system_with_nothing_scored_does_not_shrink_the_others_comparison():
    board = board_of(HALF, FULL, score("broken", [None] * 4, reason="model_failure"))
    broken = row(board, "broken")
    assert broken["mean"] is None and broken["rank"] is None and broken["coverage"] == 0
    assert broken["coverage_note"] == "no task scored (4 model_failure); not ranked"
    assert row(board, "fully-covered")["n_shared"] == 2
    wide = wide_leaderboard(leaderboard_tables(board)[0])
    assert wide.get_column("system").to_list()[-1] == "broken"
    assert wide.filter(pl.col("system") == "broken").get_column("tvir.cs").item() == f"N/A (0/4) {MARK}"


def test_tasks_a_system_was_never_evaluated_on_are_named_as_such():
    newcomer = score("newcomer", [80.0, 80.0], tasks=["t1", "t2"])  # t3, t4 registered after its run
    note = row(board_of(newcomer, FULL), "newcomer")["coverage_note"]
    assert note.startswith("scored on 2 of the 4 tasks") and "(2 not evaluated by judge-a)" in note


def test_a_system_judged_partly_by_each_judge_is_marked_in_both_tables():
    """After a judge change and a partial re-run, one system's tasks are split between two judges."""
    board = board_of(score("split", [90.0, 90.0], judge="new-judge", tasks=["t1", "t2"]),
                     score("split", [90.0, 90.0], judge="old-judge", tasks=["t3", "t4"]),
                     score("other", [50.0] * 4, judge="new-judge"), score("other", [50.0] * 4, judge="old-judge"))
    tables = leaderboard_tables(board)
    assert [t.judge for t in tables] == ["new-judge", "old-judge"]
    for table in tables:
        cell = wide_leaderboard(table).filter(pl.col("system") == "split").get_column("tvir.cs").item()
        assert cell == f"90.0 (2/2) {MARK}"  # its own rows are all scored, yet it lacks two tasks `other` has
        assert f"2 not evaluated by {table.judge}" in render([table], "table")


def test_direction_lower_is_better_and_descriptive_counts_are_not_ranked():
    board = board_of(score("a", [5.0, 5.0, 5.0, 5.0], suite="core", metric="contradicted_ratio"),
                     score("b", [20.0, 20.0, 20.0, 20.0], suite="core", metric="contradicted_ratio"),
                     score("a", [10.0] * 4, suite="core", metric="n_claims", judge="none"),
                     score("b", [30.0] * 4, suite="core", metric="n_claims", judge="none"))
    assert (row(board, "a", "contradicted_ratio")["rank"], row(board, "b", "contradicted_ratio")["rank"]) == (1, 2)
    assert row(board, "a", "n_claims", "none")["rank"] is None


def test_ties_share_the_better_rank():
    board = board_of(score("a", [50.0] * 4), score("b", [50.0] * 4), score("c", [10.0] * 4))
    assert [row(board, s)["rank"] for s in "abc"] == [1, 1, 3]


def test_two_judges_print_two_tables_and_never_a_column_of_empty_cells():
    board = board_of(score("alpha", [80.0] * 4, judge="heuristic-v1"), score("beta", [60.0] * 4, judge="heuristic-v1"),
                     score("alpha", [70.0] * 4, judge="gpt-judge"), score("gamma", [90.0] * 4, judge="gpt-judge"),
                     *(score(s, [3.0] * 4, metric="aec", judge="none") for s in ("alpha", "beta", "gamma")))
    tables = leaderboard_tables(board, "tvir")
    assert [t.judge for t in tables] == ["gpt-judge", "heuristic-v1"]
    gpt, heuristic = (wide_leaderboard(t) for t in tables)
    assert gpt.get_column("system").to_list() == ["gamma", "alpha"]        # beta was never judged by gpt-judge
    assert heuristic.get_column("system").to_list() == ["alpha", "beta"]
    for wide in (gpt, heuristic):
        assert wide.columns == ["system", "rank", "tasks", "tvir.cs", "tvir.aec"]  # no @judge columns
        assert all("None" not in cell and cell != "—" for col in wide.columns for cell in wide.get_column(col))
    text = render(tables, "table")
    headings = [line for line in text.splitlines() if line.startswith("TVIR-Bench")]
    assert len(headings) == 2 and "judge gpt-judge" in headings[0] and "judge heuristic-v1" in headings[1]
    assert "None" not in text and "None" not in render(tables, "md")


def test_csv_and_json_carry_coverage_rank_and_note_per_number():
    board = board_of(HALF, FULL, score("x", [1.0] * 4, judge="judge-b"))
    tables = leaderboard_tables(board)
    csv = pl.read_csv(render(tables, "csv").encode())
    half = csv.filter(pl.col("system") == "half-covered").row(0, named=True)
    assert (half["column"], half["n_scored"], half["n_tasks"], half["rank"], half["n_shared"]) == ("tvir.cs", 2, 4, None, 2)
    assert half["coverage_note"].startswith("scored on 2 of the 4")
    assert csv.height == 3  # one row per system x metric x judge, whatever the judges
    parsed = json.loads(render(tables, "json"))
    assert [t["judge"] for t in parsed] == ["judge-a", "judge-b"]
    first = parsed[0]
    assert (first["ranked_by"], first["n_shared"]) == ("tvir.cs", 2)
    assert [s["system"] for s in first["systems"]] == ["fully-covered", "half-covered"]
    assert first["systems"][1]["metrics"]["tvir.cs"]["coverage"] == 0.5


def test_no_shared_task_means_no_rank_and_says_so():
    board = board_of(score("a", [70.0, 70.0, None, None]), score("b", [None, None, 60.0, 60.0]))
    assert row(board, "a")["rank"] is None and row(board, "a")["n_shared"] == 0
    assert row(board, "a")["coverage_note"].endswith("not ranked (ranks are over the systems scored on all 4); "
                                                     "no task is scored for every system")
    table, = leaderboard_tables(board)
    assert ("not ranked by tvir.cs: no system was scored on every task another was scored on"
            in render([table], "table"))


def test_cli_prints_the_stored_board_and_the_live_view_agrees(tmp_path, capsys):
    home = tmp_path / "home"
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    scores = frame("metric_scores", HALF + FULL)
    keys = sorted({(r["system"], r["task"]) for r in scores.iter_rows(named=True)})
    store.replace_partitions("metric_scores", keys, {"metric_scores": scores}, "run-1")
    store.replace_partitions("leaderboard", [()], {"leaderboard": build_leaderboard(scores)}, "run-1")
    live = store.query("SELECT system, shared_mean, n_shared FROM leaderboard_live ORDER BY system")
    assert live.rows() == [("fully-covered", 90.0, 2), ("half-covered", 86.0, 2)]
    stored = store.query("SELECT system, rank, coverage_note FROM leaderboard ORDER BY rank")
    assert stored.get_column("system").to_list() == ["fully-covered", "half-covered"]
    assert main(["--home", str(home), "leaderboard", "--suite", "tvir"]) == 0
    out = capsys.readouterr().out
    assert out.index("fully-covered") < out.index("half-covered") and f"86.0 (2/4) {MARK}" in out


def test_a_board_written_before_ranks_existed_still_prints():
    old = board_of(HALF, FULL).drop("shared_mean", "n_shared", "rank", "coverage_note")
    table, = leaderboard_tables(old)
    text = render([table], "table")
    assert "hold no rank" in text and "86.0 (2/4)" in text


def test_upgrading_a_home_forgets_the_unranked_board_so_the_next_run_rebuilds_it(tmp_path):
    store = Store(tmp_path / "dreval.duckdb")
    store.ensure_schema()
    old_columns = ("shared_mean", "n_shared", "rank", "coverage_note")
    old = board_of(HALF, FULL).drop(*old_columns)

    def downgrade(con):  # a home as it was before migration 015, holding a board
        for column in old_columns:
            con.execute(f"ALTER TABLE leaderboard DROP COLUMN {column}")
        con.execute("DELETE FROM schema_migrations WHERE version = 15")
    store.write(downgrade)
    store.write(lambda con: store.insert_by_name(con, "leaderboard", old))
    store.write(lambda con: con.execute(
        "INSERT INTO materialized_partitions (asset, system, task, n_rows, run_id, materialized_at) "
        "VALUES ('leaderboard', '', '', 2, 'r', now())"))
    store.ensure_schema()
    assert store.query("SELECT count(*) FROM leaderboard").item() == 0
    assert store.materialised("leaderboard") == {}  # so `dreval run` plans the leaderboard again
    assert {"rank", "coverage_note"} <= set(store.query("SELECT * FROM leaderboard").columns)


def test_markdown_is_github_flavoured_tables_with_the_notes_outside_them():
    """Parsed as GFM (markdown-it's table rule follows it): each table holds exactly its systems' rows;
    the notes and the heading are not rows, and a pipe in a cell does not split it."""
    from markdown_it import MarkdownIt

    lucky = score("lucky|pipe", [99.0, None, None, None])
    tables = leaderboard_tables(board_of(lucky, FULL, score("alpha", [70.0] * 4, judge="judge-b")))
    text = render(tables, "md")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    depth, rows_per_table, outside = 0, [], []
    for token in tokens:
        if token.type == "table_open":
            depth, rows_per_table = depth + 1, [*rows_per_table, 0]
        elif token.type == "table_close":
            depth -= 1
        elif token.type == "tr_open" and depth:
            rows_per_table[-1] += 1
        elif token.type == "inline" and not depth:
            outside.append(token.content)
    assert rows_per_table == [1 + 2, 1 + 1]  # the header and each system: no note became a row
    assert any("scored on 1 of the 4 tasks" in line for line in outside)
    assert sum(line.startswith("TVIR-Bench") for line in outside) == 2  # headings, outside the tables
    headers = [t for t in tokens if t.type == "heading_open"]
    assert len(headers) == 2
    assert "lucky|pipe" in [t.content for t in tokens if t.type == "inline"]  # one cell, unescaped by the parser
