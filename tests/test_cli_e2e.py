"""End to end through the CLI on the bundled demo: real DuckDB file, real Dagster runs."""
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest
from dagster import DagsterEventType, DagsterInstance

sys.path.insert(0, str(Path(__file__).parent))

from demo_checks import careful_beats_loose  # noqa: E402
from test_ui_metadata import assert_leaderboard_page, assert_partitions_describe_themselves  # noqa: E402

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.defs.runner import demo_root  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402

ALL_TABLES = ["tasks", "task_sandbox", "task_rubrics", "page_texts", "reports", "parsed_reports", "report_claims",
              "fetched_references", "claim_verdicts", "report_judgments", "metric_scores", "leaderboard",
              "registered_tasks", "registered_systems", "materialized_partitions"]
PER_REPORT_ASSETS = {"reports", "parsed_reports", "fetched_references", "claim_verdicts", "report_judgments",
                     "metric_scores"}


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("demo") / "home"
    assert main(["--home", str(home), "demo"]) == 0
    return home


@pytest.fixture
def home_copy(demo_home, tmp_path) -> Path:
    """A private copy of the demo home for tests that change it."""
    target = tmp_path / "home"
    shutil.copytree(demo_home, target)
    (target / "dagster" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return target


def store(home: Path) -> Store:
    return Store(home / "dreval.duckdb")


def row_counts(home: Path) -> dict[str, int]:
    s = store(home)
    return {t: s.query(f'SELECT count(*) FROM "{t}"').item() for t in ALL_TABLES}


def materialisations(home: Path, since_runs: set[str]) -> Counter:
    """(asset, partition) -> materialisation events in runs that are not in `since_runs`."""
    instance = DagsterInstance.from_config(str(home / "dagster"))
    counts = Counter()
    for run_id in set(instance.get_run_ids()) - since_runs:
        for event in instance.all_logs(run_id, of_type=DagsterEventType.ASSET_MATERIALIZATION):
            mat = event.asset_materialization
            counts[(mat.asset_key.path[-1], mat.partition)] += 1
    return counts


def run_ids(home: Path) -> set[str]:
    return set(DagsterInstance.from_config(str(home / "dagster")).get_run_ids())


def leaderboard(home: Path, suite: str, metric: str) -> dict[str, float]:
    frame = store(home).query(
        "SELECT system, mean FROM leaderboard WHERE suite = ? AND metric = ?", [suite, metric])
    return dict(frame.iter_rows())


def test_demo_fills_every_table(demo_home):
    counts = row_counts(demo_home)
    assert all(n > 0 for n in counts.values()), counts
    assert counts["tasks"] == 8 and counts["reports"] == 24
    judges = store(demo_home).query("SELECT DISTINCT judge FROM claim_verdicts").to_series().to_list()
    assert judges == ["heuristic-v1"]


def test_demo_ranks_systems_as_a_reader_would(demo_home):
    means = leaderboard(demo_home, "core", "supported_ratio")
    assert means["careful-scholar"] > means["loose-cannon"] > means["quiet-summarizer"], means


def test_careful_beats_hallucinating_on_every_claim_level_metric(demo_home):
    assert careful_beats_loose(store(demo_home)) >= 15


def test_every_suite_scores_its_own_tasks_and_only_those(demo_home):
    rows = store(demo_home).query(
        "SELECT s.suite, t.benchmark, count(*) AS n, count(s.value) AS scored FROM metric_scores s "
        "JOIN tasks t USING (task) GROUP BY ALL")
    seen = {(r["suite"], r["benchmark"]) for r in rows.iter_rows(named=True)}
    assert all(suite in ("core", benchmark) for suite, benchmark in seen)
    assert {s for s, _ in seen} == {"core", "tvir", "mmdr", "dr3", "wlc", "drb", "miroeval"}
    na = store(demo_home).query("SELECT count(*) FROM metric_scores WHERE value IS NULL AND (na_reason IS NULL OR detail = '')")
    assert na.item() == 0  # every N/A says why


REPORT_LEVEL = {"tvir": ("ia", "wq", "adb", "flc"), "dr3": ("if", "dq"), "mmdr": ("flae", "read", "insh", "stru"),
                "miroeval": ("synthesis", "specificity", "grounding"), "wlc": ("writing",),
                "drb": ("race", "comprehensiveness", "insight", "instruction_following", "readability")}


def test_every_declared_metric_exists_for_every_system_task_pair(demo_home, capsys):
    from dreval_assets.benchmarks.suites import SUITES

    db = store(demo_home)
    pairs = db.query("SELECT r.system, r.task, t.benchmark, t.modality, r.status "
                     "FROM reports r JOIN tasks t USING (task)")
    scores = {(r["system"], r["task"], r["suite"], r["metric"]): r["value"]
              for r in db.query("SELECT system, task, suite, metric, value FROM metric_scores").iter_rows(named=True)}
    for pair in pairs.iter_rows(named=True):
        for suite in ("core", pair["benchmark"]):
            for spec in SUITES[suite].metrics:  # breakdowns (`overall.text`) are the leaderboard's, not rows here
                assert (pair["system"], pair["task"], suite, spec.metric) in scores, (pair, suite, spec.metric)
        if pair["status"] == "ok":  # a report that exists gets every report-level judged metric
            for metric in REPORT_LEVEL.get(pair["benchmark"], ()):
                assert scores[(pair["system"], pair["task"], pair["benchmark"], metric)] is not None, (pair, metric)
    for suite, metrics in REPORT_LEVEL.items():
        assert main(["--home", str(demo_home), "leaderboard", "--suite", suite]) == 0
        header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("system"))
        assert f"{suite}.{SUITES[suite].headline[0]}" in header and all(f"{suite}.{m}" in header for m in metrics)


def test_hallucinating_system_is_contradicted_most(demo_home):
    means = leaderboard(demo_home, "core", "contradicted_ratio")
    assert means["loose-cannon"] > 10 > means["careful-scholar"], means


def test_demo_planted_problems_are_reported_not_dropped(demo_home):
    s = store(demo_home)
    unresolved = s.query("SELECT source, verdict, na_reason FROM claim_verdicts "
                         "WHERE system = 'loose-cannon' AND task = 'dr3.dr3-en-004' AND source = '[4]'")
    assert unresolved.height >= 1 and set(unresolved["na_reason"]) == {"model_failure"}
    missing_page = s.query("SELECT status, na_reason FROM fetched_references WHERE url LIKE '%missing-page%'")
    assert missing_page.rows() == [("unknown", "data_accessibility")]
    bib_only = s.query("SELECT bibliography_only FROM parsed_reports "
                       "WHERE system = 'quiet-summarizer' AND task = 'wlc.harrowgate-tidal-barrage'").item()
    assert bib_only is True


def test_second_run_materialises_nothing(home_copy, capsys):
    before = run_ids(home_copy)
    assert main(["--home", str(home_copy), "run"]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert materialisations(home_copy, before) == Counter()


def test_adding_a_system_runs_only_its_partitions(home_copy, capsys):
    extra = demo_root() / "extra_systems" / "steady-analyst"
    assert main(["--home", str(home_copy), "add-system", "steady-analyst", "--reports", str(extra)]) == 0
    untouched = store(home_copy).query(
        "SELECT * FROM metric_scores WHERE system <> 'steady-analyst' ORDER BY ALL")
    before = run_ids(home_copy)
    assert main(["--home", str(home_copy), "run"]) == 0
    counts = materialisations(home_copy, before)
    per_report = {k: n for k, n in counts.items() if k[0] in PER_REPORT_ASSETS}
    assert len(per_report) == 8 * len(PER_REPORT_ASSETS)
    assert all(p.startswith("steady-analyst|") for _, p in per_report)
    assert all(n == 1 for n in per_report.values())
    assert counts[("leaderboard", None)] == 1 and ("tasks", "tvir.100001") not in counts
    assert not any(asset == "task_rubrics" for asset, _ in counts)  # shared per task: not regenerated
    assert "steady-analyst" in leaderboard(home_copy, "core", "supported_ratio")
    after = store(home_copy).query("SELECT * FROM metric_scores WHERE system <> 'steady-analyst' ORDER BY ALL")
    assert after.equals(untouched)
    # and a further run has nothing left to do
    before = run_ids(home_copy)
    assert main(["--home", str(home_copy), "run"]) == 0
    assert materialisations(home_copy, before) == Counter()


def test_forced_rerun_keeps_row_counts_identical(home_copy):
    counts = row_counts(home_copy)
    scores = store(home_copy).query("SELECT * FROM metric_scores ORDER BY ALL")
    assert main(["--home", str(home_copy), "run", "--force", "--system", "loose-cannon"]) == 0
    assert row_counts(home_copy) == counts
    assert store(home_copy).query("SELECT * FROM metric_scores ORDER BY ALL").equals(scores)
    before = run_ids(home_copy)
    assert main(["--home", str(home_copy), "run"]) == 0  # forcing one system left no one else stale
    assert materialisations(home_copy, before) == Counter()


def test_changed_report_reruns_only_its_partition(home_copy, tmp_path):
    folder = tmp_path / "edited"
    shutil.copytree(demo_root() / "systems" / "careful-scholar", folder)
    assert main(["--home", str(home_copy), "add-system", "careful-scholar", "--reports", str(folder)]) == 0
    before = run_ids(home_copy)
    assert main(["--home", str(home_copy), "run"]) == 0
    assert materialisations(home_copy, before) == Counter()  # same content, nothing stale
    report = folder / "100001.md"
    report.write_text(report.read_text() + "\nThe Meridian operator added 2 new sites in 2031.\n")
    assert main(["--home", str(home_copy), "run"]) == 0
    partitions = {p for (a, p) in materialisations(home_copy, before) if a in PER_REPORT_ASSETS}
    assert partitions == {"careful-scholar|tvir.100001"}


def test_unknown_system_is_a_clear_error(home_copy, capsys):
    assert main(["--home", str(home_copy), "run", "--system", "nope"]) == 2
    assert "unknown system(s): nope" in capsys.readouterr().err


def test_sql_is_read_only(demo_home, capsys):
    assert main(["--home", str(demo_home), "sql", "SELECT count(*) AS n FROM claim_verdicts_in_context"]) == 0
    assert main(["--home", str(demo_home), "sql", "DELETE FROM tasks"]) == 2
    assert "read-only" in capsys.readouterr().err.lower()


@pytest.mark.parametrize("fmt", ["table", "md", "csv", "json"])
def test_leaderboard_formats(demo_home, capsys, fmt):
    assert main(["--home", str(demo_home), "leaderboard", "--suite", "tvir", "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert "careful-scholar" in out and "tvir.cs" in out and "tvir.aec" in out
    assert out.index("careful-scholar") < out.index("loose-cannon")


def test_dagster_webserver_loads_the_code_location_with_partitions(demo_home, tmp_path):
    """What `dagster dev` shows: every asset, with the registered partitions."""
    import os
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "DREVAL_HOME": str(demo_home), "DAGSTER_HOME": str(demo_home / "dagster")}
    server = subprocess.Popen(
        [sys.executable, "-m", "dagster_webserver", "-w", str(root / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    query = "{ assetNodes { assetKey { path } partitionKeysByDimension { name partitionKeys } } }"
    # a job's page lists the runs of its code location: the CLI's demo runs must be among them
    job_runs = ('{ pipelineOrError(params: {pipelineName: "evaluate_job", repositoryName: "__repository__", '
                'repositoryLocationName: "dreval"}) { ... on Pipeline { runs { runId status } } } }')
    try:
        nodes = None
        deadline = time.monotonic() + 90
        while nodes is None and time.monotonic() < deadline:
            try:
                reply = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query}, timeout=5)
                nodes = reply.json()["data"]["assetNodes"]
            except (httpx.HTTPError, KeyError, ValueError, TypeError):
                time.sleep(0.5)
        assert nodes is not None, "webserver did not answer"
        reply = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": job_runs}, timeout=30).json()
    finally:
        server.terminate()
        server.wait(timeout=30)
    dims = {n["assetKey"]["path"][-1]: {d["name"]: len(d["partitionKeys"]) for d in n["partitionKeysByDimension"]}
            for n in nodes}
    assert set(dims) == {"registered_tasks", "report_sources", "tasks", "task_rubrics", "reports", "trace_steps", "parsed_reports",
                         "report_images", "fetched_references", "claim_verdicts",
                         "report_judgments", "metric_scores", "leaderboard", "agreement", "published_results",
                         "leaderboard_plots"}
    assert dims["metric_scores"] == {"system": 3, "task": 8}
    assert list(dims["tasks"].values()) == [8] and list(dims["registered_tasks"].values()) == [8]
    runs = reply["data"]["pipelineOrError"]["runs"]
    assert [run["status"] for run in runs] == ["SUCCESS"], reply  # the demo's evaluation run, from the CLI


@pytest.mark.parametrize("args, expected", [
    (["--task", "tvir.*", "--system", "careful-scholar"], {"careful-scholar|tvir.100001", "careful-scholar|tvir.100002"}),
    (["--suite", "wlc", "--system", "loose-cannon"], {"loose-cannon|wlc.harrowgate-tidal-barrage"}),
    (["--task", "Q7", "--system", "quiet-summarizer"], {"quiet-summarizer|mmdr.q7"}),  # original id
])
def test_run_selection_narrows_forced_runs(home_copy, args, expected):
    before = run_ids(home_copy)
    assert main(["--home", str(home_copy), "run", "--force", *args]) == 0
    partitions = {p for (a, p) in materialisations(home_copy, before) if a in PER_REPORT_ASSETS}
    assert partitions == expected


def test_the_ui_shows_each_partitions_figures_and_the_leaderboard(demo_home):
    """Dagster UI metadata (tests/test_ui_metadata.py) on the demo's real multi-partition runs."""
    assert_partitions_describe_themselves(demo_home)
    assert_leaderboard_page(demo_home)


def test_every_asset_check_ran_and_passed_on_the_demo(demo_home):
    instance = DagsterInstance.from_config(str(demo_home / "dagster"))
    results = Counter()
    for run_id in instance.get_run_ids():
        for event in instance.all_logs(run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION):
            data = event.dagster_event.event_specific_data
            results[(data.asset_key.path[-1], data.check_name, data.passed)] += 1
    assert {(asset, check) for asset, check, _ in results} == {
        ("reports", "status_explained"), ("parsed_reports", "no_orphan_claims"),
        ("fetched_references", "failures_explained"), ("claim_verdicts", "verdict_labels_valid"),
        ("report_judgments", "credits_valid"),
        ("metric_scores", "scores_within_range"), ("metric_scores", "na_has_reason"),
        ("agreement", "figures_in_range_or_explained")}
    assert all(passed for _, _, passed in results), results


def test_another_suite_can_be_applied_where_its_inputs_exist(home_copy, monkeypatch):
    monkeypatch.setenv("DREVAL_SUITES", "tvir")
    assert main(["--home", str(home_copy), "run", "--force", "--system", "careful-scholar", "--task", "miroeval.*"]) == 0
    rows = store(home_copy).query("SELECT suite, metric, value FROM metric_scores "
                                  "WHERE system = 'careful-scholar' AND task = 'miroeval.37' ORDER BY ALL")
    suites = set(rows["suite"])
    assert suites == {"core", "miroeval", "tvir"}
    assert rows.filter(rows["metric"] == "cs")["value"].item() > 50


def test_an_unknown_extra_suite_is_a_clear_error(home_copy, monkeypatch, capsys):
    monkeypatch.setenv("DREVAL_SUITES", "tvirr")
    assert main(["--home", str(home_copy), "run"]) == 2
    assert "unknown suite(s) ['tvirr']" in capsys.readouterr().err


def test_offline_judge_limits_are_never_the_systems_fault_and_dropping_figures_never_pays(home_copy, tmp_path):
    """On the offline demo no row blames a system for what our judge cannot see or read; a system that
    drops its figures from one TVIR report scores 0 on each visual metric there (TVIR App. B)."""
    s = store(home_copy)
    blamed = s.query("SELECT count(*) FROM metric_scores WHERE na_reason = 'model_failure' "
                     "AND (detail LIKE '%cannot see%' OR detail LIKE '%does not read%')").item()
    assert blamed == 0
    limited = s.query("SELECT DISTINCT na_reason FROM metric_scores WHERE value IS NULL AND detail LIKE '%judge limit: %'")
    assert limited.to_series().to_list() == ["pipeline_failure"]

    dropper = tmp_path / "figure-dropper"
    shutil.copytree(demo_root() / "systems" / "careful-scholar", dropper)
    report = dropper / "100001.md"
    report.write_text("\n".join(line for line in report.read_text().splitlines() if "<figure>" not in line))
    assert main(["--home", str(home_copy), "add-system", "figure-dropper", "--reports", str(dropper)]) == 0
    assert main(["--home", str(home_copy), "run", "--system", "figure-dropper", "--suite", "tvir"]) == 0
    rows = dict(s.query("SELECT metric, value FROM metric_scores WHERE system = 'figure-dropper' "
                        "AND task = 'tvir.100001' AND metric IN ('fq', 'mc', 'fcq', 'fci', 'csc', 'va')").iter_rows())
    assert rows == {m: 0.0 for m in ("fq", "mc", "fcq", "fci", "csc", "va")}
    board = {r["system"]: r for r in s.query("SELECT * FROM leaderboard WHERE suite = 'tvir' AND metric = 'va'")
             .iter_rows(named=True)}
    assert board["figure-dropper"]["mean"] == 0.0  # its one complete task; the other's figures need eyes
    assert board["careful-scholar"]["status"] == "not_comparable" and board["careful-scholar"]["rank"] is None
    assert all(r["rank"] is None for r in board.values())  # the offline judge ranks nobody on what it cannot see
