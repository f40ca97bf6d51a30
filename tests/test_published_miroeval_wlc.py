"""Published score files of MiroEval (data/detail_results) and Wiki Live (results/<run>/*_writing.json):
the rows their readers give, the verify checks recomputed from them, and a planted mismatch caught."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest

from dreval_assets.benchmarks.miroeval import loader as miro_loader
from dreval_assets.benchmarks.miroeval import published as miro_published
from dreval_assets.benchmarks.miroeval.process import process_score
from dreval_assets.benchmarks.miroeval.right_ratio import factuality_ratio
from dreval_assets.benchmarks.wlc import loader as wlc_loader
from dreval_assets.benchmarks.wlc import published as wlc_published
from dreval_assets.core.keys import task_key
from dreval_assets.releases.records import ImportLog

DETAILS = "data/detail_results"
ZH_TITLE = "长江大桥"


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def rows_and_log(loader, root: Path) -> tuple[list, ImportLog]:
    log = ImportLog()
    records = list(loader.iter_published(root, log))
    return records, log


def frame(records: list) -> pl.DataFrame:
    return pl.DataFrame([dataclasses.asdict(r) for record in records for r in record])


def by_cell(records: list) -> dict[tuple[str, str, str, str], float | None]:
    """(file stem, system, task, metric) -> value."""
    return {(Path(r.file).parent.name + "/" + Path(r.file).stem, r.system, r.task, r.metric): r.value
            for record in records for r in record}


# --- MiroEval ---------------------------------------------------------------------------------

def dims(intrinsic: tuple[int, ...], alignment: tuple[int, ...], overall: float | None = None) -> dict:
    cell = {"intrinsic": dict(zip(("search_breadth", "analytical_depth", "progressive_refinement",
                                   "critical_thinking", "efficiency"), intrinsic)),
            "alignment": dict(zip(("findings_to_report", "report_to_process", "contradiction"), alignment))}
    if overall is not None:
        cell["_overall_from_per_task"] = overall
    return cell


def miroeval_release(root: Path, beta_overall: float = 5.633) -> Path:
    """Published scores only (no task file): null cells, a model missing for a task, a malformed cell."""
    write_json(root / DETAILS / "report/text.json", {
        "1": {"alpha": {"coverage": 7.5, "insight": 6.25, "instruction_following": 8.0, "clarity": 7.0,
                        "query_spec": 6.1, "total_weighted_score": 6.974},
              "beta": None},
        "2": {"alpha": {"coverage": "high", "insight": 6.0, "instruction_following": 8.0, "clarity": 7.0,
                        "query_spec": 6.0, "total_weighted_score": 6.5},  # malformed: skipped whole
              "beta": {"coverage": 5.0, "insight": 4.0, "instruction_following": 6.0, "clarity": 5.5,
                       "query_spec": 4.5, "total_weighted_score": 5.05}},
        "3": {"beta": {"coverage": 9.0, "insight": 8.5, "instruction_following": 9.5, "clarity": 9.0,
                       "query_spec": 8.0, "total_weighted_score": 8.8}},  # alpha missing for task 3
    })
    write_json(root / DETAILS / "factuality/text.json", {
        "1": {"alpha": {"right": 52, "wrong": 3, "conflict": 0, "unknown": 8},
              "beta": {"right": 0, "wrong": 0, "conflict": 0, "unknown": 0}},
        "2": {"alpha": None, "beta": {"right": 10, "wrong": 2.5, "conflict": 0, "unknown": 1}},  # 2.5: not a count
    })
    write_json(root / DETAILS / "process/text.json", {
        # 7.033 = mean(37/5, 20/3) on 1-10: the two-group mean (an even mean of all eight gives 7.125)
        "1": {"alpha": dims((8, 7, 8, 7, 7), (7, 5, 8), 7.033),
              "beta": dims((6, 5, 6, 5, 6), (6, 4, 7), beta_overall)},  # mean(28/5, 17/3) = 5.6333
        "2": {"alpha": None},
    })
    write_json(root / DETAILS / "process/multimodal.json", {"101": {"alpha": dims((9, 8, 8, 8, 7), (8, 6, 9))}})
    return root


def test_process_score_is_the_mean_of_the_two_group_means():
    assert process_score(dict(a=8, b=7), {}) is None  # unknown names only: no intrinsic dimension scored
    intrinsic = dict(zip(("search_breadth", "analytical_depth", "progressive_refinement", "critical_thinking",
                          "efficiency"), (8, 7, 8, 7, 7)))
    alignment = dict(zip(("findings_to_report", "report_to_process", "contradiction"), (7, 5, 8)))
    assert process_score(intrinsic, alignment) == pytest.approx(10 * (37 / 5 + 20 / 3) / 2)  # 70.33, not 71.25
    assert process_score(intrinsic, {**alignment, "contradiction": None}) == pytest.approx(10 * (7.4 + 6) / 2)
    assert process_score(intrinsic, {d: None for d in alignment}) is None


def test_factuality_ratio_per_task_and_pooled():
    assert factuality_ratio(52, 3, 0, 8) == pytest.approx(52 / 63)
    assert factuality_ratio(0, 0, 0, 0) is None
    assert factuality_ratio(52 + 10, 3 + 2, 0, 8 + 1) == pytest.approx(62 / 76)  # pooled: counts summed first


def test_miroeval_layout_accepts_a_folder_of_published_scores_only(tmp_path):
    root = miroeval_release(tmp_path / "r")
    assert miro_loader.has_published(root) and miro_loader.layout_problem(root) is None
    assert miro_loader.layout_problem(tmp_path) is not None and not miro_loader.has_published(tmp_path)


def test_miroeval_report_rows_scaled_to_ours_null_cells_kept_missing_models_absent(tmp_path):
    records, log = rows_and_log(miro_loader, miroeval_release(tmp_path / "r"))
    cells = by_cell(records)
    t1, t2, t3 = (task_key("miroeval", n) for n in "123")
    assert {m: cells[("report/text", "alpha", t1, m)] for m in
            ("coverage", "insight", "instruction_following", "clarity", "specificity", "synthesis")} == pytest.approx(
        {"coverage": 75.0, "insight": 62.5, "instruction_following": 80.0, "clarity": 70.0, "specificity": 61.0,
         "synthesis": 69.74})
    assert [cells[("report/text", "beta", t1, m)] for m in ("coverage", "synthesis")] == [None, None]  # null cell
    assert ("report/text", "alpha", t3, "coverage") not in cells  # no cell, no row
    assert ("report/text", "alpha", t2, "insight") not in cells  # the malformed cell is skipped whole ...
    assert cells[("report/text", "beta", t2, "coverage")] == 50.0  # ... its task's other cells are kept
    row = next(r for record in records for r in record if r.metric == "specificity" and r.system == "alpha")
    assert (row.published_metric, row.published_value, row.scale, row.file, row.line) == (
        "query_spec", 6.1, "0-100", f"{DETAILS}/report/text.json", 1)
    assert [str(p) for p in log.skipped] == [
        f"{DETAILS}/report/text.json:2: task 2, model alpha: coverage: 'high' is not a number; cell not imported",
        f"{DETAILS}/factuality/text.json:2: task 2, model beta: wrong = 2.5 is not a whole count; cell not imported"]


def test_miroeval_factuality_counts_and_the_derived_right_ratio(tmp_path):
    records, _ = rows_and_log(miro_loader, miroeval_release(tmp_path / "r"))
    cells = by_cell(records)
    t1, t2 = task_key("miroeval", "1"), task_key("miroeval", "2")
    counts = [cells[("factuality/text", "alpha", t1, m)] for m in ("right", "wrong", "conflict", "unknown")]
    assert counts == [52, 3, 0, 8]
    assert cells[("factuality/text", "alpha", t1, "factuality")] == pytest.approx(100 * 52 / 63)
    assert cells[("factuality/text", "beta", t1, "factuality")] is None  # no statements: no ratio, not 0
    assert [cells[("factuality/text", "alpha", t2, m)] for m in ("right", "factuality")] == [None, None]  # null cell
    derived = next(r for record in records for r in record if r.metric == "factuality" and r.system == "alpha")
    assert (derived.published_metric, derived.scale) == ("right/(right+wrong+conflict+unknown)", "0-100")
    assert next(r for record in records for r in record if r.metric == "wrong").scale == "count"


def test_miroeval_process_dimensions_and_published_overall(tmp_path):
    records, _ = rows_and_log(miro_loader, miroeval_release(tmp_path / "r"))
    cells = by_cell(records)
    t1, t101 = task_key("miroeval", "1"), task_key("miroeval", "101")
    assert cells[("process/text", "alpha", t1, "process.search_breadth")] == 80.0
    assert cells[("process/text", "alpha", t1, "process.report_to_process")] == 50.0
    assert cells[("process/text", "alpha", t1, "process")] == pytest.approx(70.33)
    assert ("process/multimodal", "alpha", t101, "process") not in cells  # no published overall, none derived
    assert cells[("process/multimodal", "alpha", t101, "process.contradiction")] == 90.0
    null_cell = {m: v for (f, s, t, m), v in cells.items() if (f, s, t) == ("process/text", "alpha", "miroeval.2")}
    assert len(null_cell) == 8 and set(null_cell.values()) == {None}
    row = next(r for record in records for r in record if r.metric == "process.efficiency")
    assert (row.published_metric, row.published_value) == ("intrinsic.efficiency", 7.0)


def test_miroeval_checks_recompute_process_overall_and_bound_small_synthesis_tasks(tmp_path):
    records, _ = rows_and_log(miro_loader, miroeval_release(tmp_path / "r"))
    checks = list(miro_published.published_checks(frame(records)))
    process = [c for c in checks if c.what.startswith("task process")]
    assert [(c.system, c.matched) for c in process] == [("alpha", True), ("beta", True)]
    assert process[0].recomputed == pytest.approx(70.333, abs=1e-3) and process[0].published == pytest.approx(70.33)
    # one or two systems per task: too few to solve the shared weights; each total lies within its parts
    bounds = [c for c in checks if c.what.startswith("task synthesis total_weighted_score lies within")]
    assert [(c.system, c.task, c.matched, c.identity) for c in bounds] == [
        ("alpha", "miroeval.1", True, True), ("beta", "miroeval.2", True, True), ("beta", "miroeval.3", True, True)]
    unsolved = [c for c in checks if c.recomputed is None]
    assert len(unsolved) == 1 and "3 task(s) with fewer than 6 systems' complete cells" in unsolved[0].note


SHARED_WEIGHTS = (0.15, 0.12, 0.10, 0.18, 0.45)  # coverage, insight, instruction_following, clarity, query_spec


def shared_weight_task(systems: int = 9) -> dict:
    """One task's report cells whose totals all come from the same weights, written to three decimals."""
    cells = {}
    for k in range(systems):
        parts = [round(2.0 + ((k * 7 + d * 3) % 11) * 0.6 + d * 0.13 + k * 0.071, 3) for d in range(5)]
        total = round(sum(w * x for w, x in zip(SHARED_WEIGHTS, parts)), 3)
        cells[f"sys{k}"] = {**dict(zip(("coverage", "insight", "instruction_following", "clarity", "query_spec"),
                                       parts)), "total_weighted_score": total}
    return cells


def synthesis_release(root: Path, task: dict) -> list:
    write_json(root / DETAILS / "report/text.json", {"7": task})
    return rows_and_log(miro_loader, root)[0]


def test_miroeval_synthesis_totals_follow_the_weights_the_tasks_systems_share(tmp_path):
    checks = list(miro_published.published_checks(frame(synthesis_release(tmp_path / "r", shared_weight_task()))))
    assert len(checks) == 9 and all(c.matched for c in checks), [c for c in checks if not c.matched]
    assert all(c.what.startswith("task synthesis total_weighted_score = the task's shared weights") for c in checks)
    assert "weights solved from 8 other system(s): coverage 0.15, insight 0.12, instruction_following 0.1, " \
           "clarity 0.18, query_spec 0.45" in checks[0].note


@pytest.mark.parametrize("field", ["total_weighted_score", "coverage"])
def test_miroeval_a_synthesis_cell_moved_by_half_a_point_is_named(tmp_path, field):
    task = shared_weight_task()
    task["sys4"][field] = round(task["sys4"][field] + 0.5, 3)
    checks = list(miro_published.published_checks(frame(synthesis_release(tmp_path / "r", task))))
    wrong = [c for c in checks if not c.matched]
    assert [(c.system, c.task) for c in wrong] == [("sys4", "miroeval.7")]
    assert "this cell breaks the weights the task's other cells share" in wrong[0].note
    expected = 10 * sum(w * x for w, x in zip(SHARED_WEIGHTS, shared_weight_task()["sys4"].values()))
    moved = 0.5 * (SHARED_WEIGHTS[0] if field == "coverage" else 0)
    assert wrong[0].recomputed == pytest.approx(expected + 10 * moved, abs=0.02)


def test_miroeval_a_cell_with_a_null_dimension_is_left_out_of_the_shared_weights(tmp_path):
    """A failed dimension renormalises that cell's weights: it cannot be held to the others'."""
    task = shared_weight_task()
    task["sys2"]["insight"] = None
    task["sys2"]["total_weighted_score"] = 5.0
    checks = list(miro_published.published_checks(frame(synthesis_release(tmp_path / "r", task))))
    assert len(checks) == 8 and all(c.matched for c in checks) and "sys2" not in {c.system for c in checks}


def test_miroeval_planted_process_mismatch_is_caught(tmp_path):
    records, _ = rows_and_log(miro_loader, miroeval_release(tmp_path / "r", beta_overall=6.2))
    wrong = [c for c in miro_published.published_checks(frame(records)) if c.recomputed is not None and not c.matched]
    assert [(c.system, c.task, c.published) for c in wrong] == [("beta", "miroeval.1", pytest.approx(62.0))]
    assert wrong[0].recomputed == pytest.approx(56.333, abs=1e-3)


def test_miroeval_model_overall_at_the_top_level_is_a_system_row_checked_over_its_tasks(tmp_path):
    root = miroeval_release(tmp_path / "r")
    path = root / DETAILS / "process/text.json"
    data = json.loads(path.read_text())
    data["_overall_from_per_task"] = {"alpha": 7.033, "beta": "seven"}
    write_json(path, data)
    records, log = rows_and_log(miro_loader, root)
    system_rows = [r for record in records for r in record if r.task == ""]
    assert [(r.system, r.metric, r.value) for r in system_rows] == [("alpha", "process", pytest.approx(70.33))]
    assert any("_overall_from_per_task, model beta" in str(p) for p in log.skipped)
    model = [c for c in miro_published.published_checks(frame(records)) if c.task == ""
             and c.what.startswith("model")]
    assert len(model) == 1 and model[0].matched and "1 task(s)" in model[0].note  # task 2's cell is null


def test_miroeval_model_overall_over_more_tasks_than_the_file_holds_is_not_comparable(tmp_path):
    root = miroeval_release(tmp_path / "r")
    path = root / DETAILS / "process/text.json"
    data = json.loads(path.read_text())
    data["_overall_from_per_task"] = {"alpha": 6.48}  # over the split's 70 tasks; the file holds 2 (1 scored)
    write_json(path, data)
    records, _ = rows_and_log(miro_loader, root)
    model = [c for c in miro_published.published_checks(frame(records)) if c.what.startswith("model")]
    assert len(model) == 1 and model[0].recomputed is None
    assert model[0].note.startswith("the release holds 2 of the benchmark's 70 tasks; the published aggregate "
                                    "differs from the one over those 2 (70.3333)")


# --- Wiki Live --------------------------------------------------------------------------------

CATEGORY_NAMES = {"well_written": "Well-written", "broad": "Broad in coverage", "neutral": "Neutral"}


def writing_result(topic: str, winners: dict[str, list[str]], **overrides) -> dict:
    """A results file in the release's shape whose aggregates agree with its details (then `overrides`
    replace aggregate entries: {category: {field: value}})."""
    aggregate, details = {}, {}
    for ours, outcome in winners.items():
        name = CATEGORY_NAMES[ours]
        details[name] = [{"criterion_id": f"{ours}_{i}", "criterion_index": i, "criterion_text": "...",
                          "category": name, "winner": w, "winner_code": {"gen": 1, "gt": 2, "tie": 0}[w],
                          "reason": "because"} for i, w in enumerate(outcome, start=1)]
        aggregate[name] = counts(outcome)
    aggregate["overall"] = counts([w for outcome in winners.values() for w in outcome])
    for category, fields in overrides.items():
        aggregate[category].update(fields)
    return {"topic": topic, "mode": "winrate", "allow_tie": True, "aggregate": aggregate, "details": details}


def counts(outcome: list[str]) -> dict:
    gen, gt, tie = (outcome.count(w) for w in ("gen", "gt", "tie"))
    return {"gen_wins": gen, "gt_wins": gt, "ties": tie, "total": len(outcome), "gen_win_rate": gen / len(outcome)}


WINNERS_A = {"well_written": ["gen", "gt", "tie", "gen"], "broad": ["gt", "gt", "gen"], "neutral": ["tie", "gen"]}
WINNERS_B = {"well_written": ["gt", "gt", "gt", "gen"], "broad": ["gen", "gen", "gen"], "neutral": ["gt", "tie"]}


def wlc_release(root: Path, with_tasks: bool = True, **overrides) -> Path:
    wiki = root / "data/2025-12/wiki_data"
    if with_tasks:
        write_json(wiki / "ga_100.json", [
            {"id": 1, "title": "Harbor Lantern Festival", "url": "", "question": "Write about the festival."},
            {"id": 2, "title": ZH_TITLE, "url": "", "question": "Write about the bridge."}])
        for title in ("Harbor Lantern Festival", ZH_TITLE):
            (wiki / "cleaned_data/article").mkdir(parents=True, exist_ok=True)
            article = wiki / "cleaned_data/article" / f"{title}.md"
            article.write_text(f"# {title}\n\nReference text.\n", encoding="utf-8")
    write_json(root / "results/run-a/Harbor_Lantern_Festival_writing.json",
               writing_result("Harbor Lantern Festival", WINNERS_A, **overrides))
    write_json(root / f"results/run-a/{ZH_TITLE}_writing.json", writing_result(ZH_TITLE, WINNERS_B))
    write_json(root / "results/run-b/Harbor Lantern Festival_writing.json", writing_result("", WINNERS_B))
    bad = writing_result("Harbor Lantern Festival", WINNERS_A)
    bad["details"]["Neutral"][1]["winner"] = "draw"
    write_json(root / "results/run-c/Harbor Lantern Festival_writing.json", bad)
    write_json(root / "results/run-a/Unknown Topic_writing.json", writing_result("Unknown Topic", WINNERS_A))
    return root


def test_wlc_layout_accepts_results_only(tmp_path):
    root = wlc_release(tmp_path / "r", with_tasks=False)
    assert wlc_loader.has_published(root) and wlc_loader.layout_problem(root) is None
    assert wlc_loader.layout_problem(tmp_path / "r" / "results") is not None


def test_wlc_rows_per_criterion_category_and_overall_titles_matched_to_tasks(tmp_path):
    records, log = rows_and_log(wlc_loader, wlc_release(tmp_path / "r"))
    cells = {(r.system, r.task, r.metric): r for record in records for r in record}
    festival, bridge = "wlc.2025-12-1", "wlc.2025-12-2"
    assert [cells[("run-a", festival, f"well_written.c{i}")].value for i in (1, 2, 3, 4)] == [1.0, 0.0, 0.5, 1.0]
    assert cells[("run-a", festival, "well_written")].value == pytest.approx(50.0)
    assert cells[("run-a", festival, "broad")].value == pytest.approx(100 / 3)
    assert cells[("run-a", festival, "writing")].value == pytest.approx(100 * 4 / 9)
    neutral = [cells[("run-a", festival, f"neutral.{n}")].value for n in ("gen_wins", "gt_wins", "ties", "total")]
    assert neutral == [1, 0, 1, 2]
    assert cells[("run-a", bridge, "broad")].value == 100.0  # the Chinese title, matched by file name and topic
    assert cells[("run-b", festival, "neutral")].value == 0.0  # no topic: matched by the file name
    rate = cells[("run-a", festival, "well_written")]
    assert (rate.published_metric, rate.published_value, rate.scale, rate.file, rate.line) == (
        "aggregate.Well-written.gen_win_rate", 0.5, "0-100", "results/run-a/Harbor_Lantern_Festival_writing.json", None)
    criterion = cells[("run-a", festival, "neutral.c1")]
    assert (criterion.published_metric, criterion.published_value, criterion.scale) == (
        "details.Neutral[0].winner", None, "0-1")
    assert {s for s, _, _ in cells} == {"run-a", "run-b"}  # run-c's only file is malformed
    assert sorted(str(p) for p in log.skipped) == [
        "results/run-c/Harbor Lantern Festival_writing.json: details.Neutral[1]: winner 'draw' is not gen, gt or tie; "
        "file not imported"]
    # an article without a task file: imported, keyed by its title, and said so
    unknown = task_key("wlc", "Unknown_Topic")
    assert cells[("run-a", unknown, "writing")].value == pytest.approx(100 * 4 / 9)
    assert cells[("run-a", unknown, "well_written.c1")].value == 1.0
    assert [str(p) for p in log.notes if "Unknown Topic" in str(p)] == [
        "results/run-a/Unknown Topic_writing.json: no task for this article (no task file has this title): its "
        "published scores are keyed by its title 'Unknown Topic' (wlc.unknown_topic)"]


def test_wlc_results_without_tasks_are_keyed_by_title_and_say_so(tmp_path):
    records, log = rows_and_log(wlc_loader, wlc_release(tmp_path / "r", with_tasks=False))
    tasks = {r.task for record in records for r in record}
    assert tasks == {task_key("wlc", "Harbor_Lantern_Festival"), task_key("wlc", ZH_TITLE),
                     task_key("wlc", "Unknown_Topic")}
    assert any("keyed by title" in p.reason for p in log.notes)


def test_wlc_category_names_map_to_ours():
    assert [wlc_published.category_metric(n) for n in ("Well-written", "well_written", "Broad in its coverage",
                                                        "Neutrality", "overall", "Stable")] == [
        "well_written", "well_written", "broad", "neutral", "writing", "stable"]


def test_wlc_checks_recompute_rates_and_counts_from_details(tmp_path):
    records, _ = rows_and_log(wlc_loader, wlc_release(tmp_path / "r"))
    checks = list(wlc_published.published_checks(frame(records)))
    assert checks and all(c.matched for c in checks)
    # per article (four, the one without a task file too): 4 rates (3 categories + overall) and 4 counts each
    assert len(checks) == 4 * 5 * 4
    overall = next(c for c in checks if c.what.startswith("writing =") and c.system == "run-a"
                   and c.task == "wlc.2025-12-1")
    assert overall.recomputed == pytest.approx(100 * 4 / 9)


def test_wlc_planted_mismatches_are_caught(tmp_path):
    root = wlc_release(tmp_path / "r", **{"Broad in coverage": {"gen_win_rate": 0.9, "ties": 1}})
    records, _ = rows_and_log(wlc_loader, root)
    wrong = [c for c in wlc_published.published_checks(frame(records)) if not c.matched]
    assert sorted((c.system, c.task, c.what) for c in wrong) == [
        ("run-a", "wlc.2025-12-1", "broad = generated wins / its criteria"),
        ("run-a", "wlc.2025-12-1", "broad.ties = criteria tied in details")]
    rate = next(c for c in wrong if c.what.startswith("broad ="))
    assert (rate.published, rate.recomputed) == (pytest.approx(90.0), pytest.approx(100 / 3))


def test_wlc_a_flipped_winner_in_an_article_without_a_task_file_is_caught(tmp_path):
    """The release's only writing result may be for an article no task file has: it is still read, and its
    win rates are recomputed from its per-criterion winners."""
    root = wlc_release(tmp_path / "r")
    path = root / "results/run-a/Unknown Topic_writing.json"
    data = json.loads(path.read_text())
    assert data["details"]["Broad in coverage"][0]["winner"] == "gt"
    data["details"]["Broad in coverage"][0]["winner"] = "gen"  # the aggregates still say 1 of 3 won
    write_json(path, data)
    records, _ = rows_and_log(wlc_loader, root)
    wrong = [c for c in wlc_published.published_checks(frame(records)) if not c.matched]
    unknown = task_key("wlc", "Unknown_Topic")
    assert sorted(c.what for c in wrong if c.task == unknown) == [
        "broad = generated wins / its criteria", "broad.gen_wins = criteria won in details",
        "broad.gt_wins = criteria lost in details", "writing = generated wins / all criteria (micro)",
        "writing.gen_wins = criteria won in details", "writing.gt_wins = criteria lost in details"]
    assert all(c.task == unknown for c in wrong)
    rate = next(c for c in wrong if c.what.startswith("broad ="))
    assert (rate.published, rate.recomputed) == (pytest.approx(100 / 3), pytest.approx(200 / 3))


# --- dreval import and dreval verify, end to end on a home ---------------------------------------

def cli(capsys, *args: str) -> tuple[int, str]:
    from dreval_assets.cli import main

    capsys.readouterr()
    status = main(list(args))
    return status, capsys.readouterr().out


def published_rows(home: Path, benchmark: str) -> dict[tuple[str, str, str, str], dict]:
    from dreval_assets.store.db import Store

    frame = Store(home / "dreval.duckdb").query("SELECT * FROM published_scores WHERE benchmark = ?", [benchmark])
    return {(r["file"], r["system"], r["task"], r["metric"]): r for r in frame.iter_rows(named=True)}


def test_miroeval_scores_alone_import_and_verify(tmp_path, capsys):
    home = tmp_path / "home"
    status, out = cli(capsys, "--home", str(home), "import", "miroeval", str(miroeval_release(tmp_path / "r")))
    assert status == 0, out
    assert "only its published scores were imported" in out and "coverage: 'high' is not a number" in out
    rows = published_rows(home, "miroeval")
    assert len(rows) == 73  # report 24 (6 a cell), factuality 15 (5 a cell), process 26 + 8 (8 a cell, +1 overall)
    row = rows[(f"{DETAILS}/report/text.json", "alpha", "miroeval.1", "specificity")]
    assert (row["value"], row["scale"], row["published_metric"], row["published_value"], row["line"]) == (
        pytest.approx(61.0), "0-100", "query_spec", 6.1, 1)
    assert rows[(f"{DETAILS}/factuality/text.json", "beta", "miroeval.1", "factuality")]["value"] is None

    status, out = cli(capsys, "--home", str(home), "verify", "miroeval")
    assert status == 0, out
    assert out.startswith("miroeval: 73 published scores; checks 6: matched 5, not comparable 1, inconsistent in "
                          "the release 0, mismatched 0"), out
    assert "not comparable (1): task synthesis total_weighted_score = the task's shared weights" in out
    assert "3 task(s) with fewer than 6 systems' complete cells" in out

    cli(capsys, "--home", str(home), "import", "miroeval", str(miroeval_release(tmp_path / "r", beta_overall=6.2)))
    assert len(published_rows(home, "miroeval")) == 73  # re-import replaced each file's rows
    status, out = cli(capsys, "--home", str(home), "verify", "miroeval")
    assert status == 1
    assert ("MISMATCH system beta, task miroeval.1: task process = mean(intrinsic mean, alignment mean) x10: "
            "published 62, recomputed 56.3333") in out


def test_wlc_writing_results_import_and_verify(tmp_path, capsys):
    home = tmp_path / "home"
    status, out = cli(capsys, "--home", str(home), "import", "wlc", str(wlc_release(tmp_path / "r")))
    assert status == 0, out
    rows = published_rows(home, "wlc")
    bridge = rows[(f"results/run-a/{ZH_TITLE}_writing.json", "run-a", "wlc.2025-12-2", "broad")]
    assert (bridge["value"], bridge["published_metric"]) == (100.0, "aggregate.Broad in coverage.gen_win_rate")
    assert "winner 'draw' is not gen, gt or tie" in out
    status, out = cli(capsys, "--home", str(home), "verify", "wlc")
    assert status == 0, out
    assert out.startswith("wlc: ") and "checks 80: matched 80, not comparable 0, inconsistent in the release 0, " \
        "mismatched 0" in out

    flipped = wlc_release(tmp_path / "flipped")  # the article without a task file: a winner flipped in details
    path = flipped / "results/run-a/Unknown Topic_writing.json"
    data = json.loads(path.read_text())
    data["details"]["Neutral"][0]["winner"] = "gt"
    write_json(path, data)
    cli(capsys, "--home", str(home), "import", "wlc", str(flipped))
    status, out = cli(capsys, "--home", str(home), "verify", "wlc")
    assert status == 1
    assert ("MISMATCH system run-a, task wlc.unknown_topic: neutral.ties = criteria tied in details: published 1, "
            "recomputed 0") in out

    planted = wlc_release(tmp_path / "planted", **{"overall": {"gen_win_rate": 0.5}})
    cli(capsys, "--home", str(home), "import", "wlc", str(planted))
    status, out = cli(capsys, "--home", str(home), "verify", "wlc")
    assert status == 1
    assert ("MISMATCH system run-a, task wlc.2025-12-1: writing = generated wins / all criteria (micro): "
            "published 50, recomputed 44.4444") in out


def test_wlc_results_alone_import(tmp_path, capsys):
    home = tmp_path / "home"
    status, out = cli(capsys, "--home", str(home), "import", "wlc", str(wlc_release(tmp_path / "r", with_tasks=False)))
    assert status == 0, out
    assert "keyed by title" in out
    assert {task for _, _, task, _ in published_rows(home, "wlc")} == {
        task_key("wlc", "Harbor_Lantern_Festival"), task_key("wlc", ZH_TITLE), task_key("wlc", "Unknown_Topic")}
