"""`dreval import` end to end: every official layout's fixture imports and evaluates to the
leaderboard; re-importing changes nothing; a changed task re-runs only its own partitions."""
import json
import shutil
from pathlib import Path

import pytest

from dreval_assets.cli import main
from dreval_assets.store.db import Store

FIXTURES = Path(__file__).parent / "fixtures" / "releases"
LAYOUTS = ("miroeval", "mmdr", "dr3", "tvir", "wlc", "drb")


def store(home: Path) -> Store:
    return Store(home / "dreval.duckdb")


@pytest.fixture(scope="module")
def imported_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("imported") / "home"
    for benchmark in LAYOUTS:
        assert main(["--home", str(home), "import", benchmark, str(FIXTURES / benchmark)]) == 0
    # one system per layout evaluates to the leaderboard (each system is its own Dagster run: all 13
    # would only repeat the same path)
    first = store(home).query("SELECT t.benchmark, min(r.system) AS system FROM imported_reports r "
                              "JOIN registered_tasks t USING (task) GROUP BY ALL")["system"].to_list()
    assert main(["--home", str(home), "run", *[arg for s in first for arg in ("--system", s)]]) == 0
    return home


def test_every_official_layout_evaluates_to_the_leaderboard(imported_home, capsys):
    db = store(imported_home)
    systems = db.query("SELECT t.benchmark, min(r.system) AS system FROM imported_reports r "
                       "JOIN registered_tasks t USING (task) GROUP BY ALL")
    assert set(systems["benchmark"]) == set(LAYOUTS)
    board = db.query("SELECT DISTINCT system, suite FROM leaderboard")
    on_board = {(r["system"], r["suite"]) for r in board.iter_rows(named=True)}
    for row in systems.iter_rows(named=True):
        assert (row["system"], row["benchmark"]) in on_board, row
    # an imported system is evaluated on its own benchmark's tasks only
    foreign = db.query("SELECT count(*) FROM metric_scores m JOIN tasks t USING (task) WHERE m.system IN "
                       "(SELECT system FROM imported_reports) AND t.benchmark NOT IN (SELECT DISTINCT tt.benchmark "
                       "FROM imported_reports r JOIN tasks tt USING (task) WHERE r.system = m.system)").item()
    assert foreign == 0
    for benchmark in LAYOUTS:
        capsys.readouterr()
        assert main(["--home", str(imported_home), "leaderboard", "--suite", benchmark]) == 0
        printed = capsys.readouterr().out
        for system in set(systems.filter(systems["benchmark"] == benchmark)["system"]):
            assert system in printed, (benchmark, system)


def test_release_material_reaches_the_tables(imported_home):
    db = store(imported_home)
    drb = db.query("SELECT count(*) FROM task_rubrics WHERE kind = 'race_criteria'").item()
    assert drb >= 1  # DeepResearch Bench criteria loaded into task_rubrics
    checklists = db.query("SELECT DISTINCT task FROM task_rubrics WHERE kind = 'checklist'")["task"].to_list()
    assert any(t.startswith("tvir.") for t in checklists) and any(t.startswith("dr3.") for t in checklists)
    gt = db.query("SELECT count(*) FROM tasks WHERE visual_ground_truth_version LIKE 'sha256:%'").item()
    assert gt >= 1
    problems = db.query("SELECT kind, count(*) AS n FROM import_problems GROUP BY kind")
    assert {r["kind"] for r in problems.iter_rows(named=True)} >= {"skipped", "missing", "note"}


def test_reimport_changes_nothing_and_a_changed_task_reruns_only_its_partitions(tmp_path, capsys):
    release = tmp_path / "drb"
    shutil.copytree(FIXTURES / "drb", release)
    home = tmp_path / "home"
    assert main(["--home", str(home), "import", "drb", str(release)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    db = store(home)
    before = {t: db.query(f"SELECT count(*) FROM {t}").item()
              for t in ("registered_tasks", "imported_reports", "tasks", "metric_scores")}
    capsys.readouterr()
    assert main(["--home", str(home), "import", "drb", str(release)]) == 0
    out = capsys.readouterr().out
    assert "0 new, 0 changed" in out and "reports found" in out
    assert main(["--home", str(home), "run"]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert before == {t: db.query(f"SELECT count(*) FROM {t}").item() for t in before}

    queries = release / "data" / "prompt_data" / "query.jsonl"
    lines = queries.read_text(encoding="utf-8", errors="surrogateescape").split("\n")
    first = json.loads(lines[0])
    first["prompt"] += " Focus on the last five years."
    lines[0] = json.dumps(first)
    queries.write_text("\n".join(lines), encoding="utf-8", errors="surrogateescape")
    assert main(["--home", str(home), "import", "drb", str(release)]) == 0
    assert "(0 new, 1 changed" in capsys.readouterr().out
    changed_key = f"drb.{first['id']}"
    # Dagster sees it too: the changed task's partition is stale, the others fresh
    status = stale_status(home, "tasks")
    assert status[changed_key] == "STALE" and set(v for k, v in status.items() if k != changed_key) == {"FRESH"}
    assert main(["--home", str(home), "run"]) == 0
    plan = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("plan:"))
    n_systems = db.query("SELECT count(DISTINCT system) FROM imported_reports").item()
    assert plan.startswith(f"plan: 1 task partition(s) (task changed 1), {n_systems} system x task partition(s)")
    assert set(stale_status(home, "tasks").values()) == {"FRESH"}  # materialised again: fresh


def stale_status(home: Path, asset: str) -> dict[str, str]:
    """Dagster's own stale status of every partition of `asset` in the home's instance."""
    from dagster import AssetKey, DagsterInstance
    from dagster._core.definitions.data_version import CachingStaleStatusResolver
    from dagster._core.loader import LoadingContextForTest

    from dreval_assets.config import Settings
    from dreval_assets.defs.definitions import build_definitions

    instance = DagsterInstance.from_config(str(home / "dagster"))
    graph = build_definitions(Settings(home)).get_repository_def().asset_graph
    resolver = CachingStaleStatusResolver(instance, graph, LoadingContextForTest(instance))
    return {k: resolver.get_status(AssetKey(asset), k).value for k in instance.get_dynamic_partitions("task")}


def test_import_errors_are_clear(tmp_path, capsys):
    home = str(tmp_path / "home")
    assert main(["--home", home, "import", "nosuch", str(tmp_path)]) == 2
    assert "unknown benchmark 'nosuch'" in capsys.readouterr().err
    assert main(["--home", home, "import", "drb", str(tmp_path)]) == 2
    assert f"{tmp_path}: " in capsys.readouterr().err
    assert main(["--home", home, "import", "drb", str(FIXTURES / "drb"), "--reports", str(tmp_path)]) == 2
    assert "--reports needs --system" in capsys.readouterr().err


def test_a_folder_of_reports_joins_a_release_as_one_named_system(tmp_path, capsys):
    home = str(tmp_path / "home")
    reports = tmp_path / "mine"
    reports.mkdir()
    (reports / "000001.md").write_text("# Report\n\nThe operators run 12 ferries [1].\n\n## References\n"
                                       "[1] Ferries https://ferries.example/fleet\n", encoding="utf-8")
    (reports / "tvir.100001.md").write_text("# Report by key\n\nText.\n", encoding="utf-8")
    (reports / "424242.md").write_text("# No such task\n", encoding="utf-8")
    (reports / "100002.md").write_text("   \n", encoding="utf-8")
    assert main(["--home", home, "import", "tvir", str(FIXTURES / "tvir"), "--system", "My Agent",
                 "--reports", str(reports)]) == 0
    out = capsys.readouterr().out
    assert "reports found: 2 (2 new" in out and "my-agent: 2" in out
    assert "no task with id '424242'" in out and "empty report" in out
    db = store(Path(home))
    rows = db.query("SELECT system, task, original_id FROM imported_reports ORDER BY task")
    assert rows.rows() == [("my-agent", "tvir.000001", "000001"), ("my-agent", "tvir.100001", "tvir.100001")]
    kinds = dict(db.query("SELECT system, kind FROM registered_systems").iter_rows())
    assert kinds == {"my-agent": "imported"}  # the release's own systems were not imported


def test_dr3_citations_of_corpus_documents_and_user_files_are_checked_offline(imported_home):
    assert main(["--home", str(imported_home), "run", "--system", "gpt-4.1-32k"]) == 0
    fetched = store(imported_home).query("SELECT url, status, final_url FROM fetched_references "
                                         "WHERE system = 'gpt-4.1-32k' ORDER BY url")
    assert fetched.rows() == [("attachment:field_notes.txt", "ok", "attachment:datasets_en/002/field_notes.txt"),
                              ("doc:Valley rebate programme results", "ok", "doc:Valley rebate programme results")]
    cc = store(imported_home).query("SELECT value, na_reason, detail FROM metric_scores WHERE system = 'gpt-4.1-32k' "
                                    "AND task = 'dr3.en-1' AND metric = 'cc'").row(0, named=True)
    # the fixture's 32k corpus lacks one of the two supportive documents (only its 64k one holds it): the
    # 32k run could not have found it, so this is not the published sandbox, not a 50 % coverage
    assert cc["value"] is None and cc["na_reason"] == "data_accessibility"
    assert "32k corpus this run searched lacks 1 of 2 supportive documents" in cc["detail"]
    assert "'Installer workforce survey 2023'" in cc["detail"] and "corpus 32k: 1 supportive" in cc["detail"]


def test_a_folder_of_reports_joins_a_generic_release_whose_tasks_belong_to_other_benchmarks(tmp_path, capsys):
    """A generic release registers tasks under the benchmark each names (the demo's `tvir.100001`):
    `--reports` finds them by their original id all the same."""
    from dreval_assets.defs.runner import demo_root

    home = str(tmp_path / "home")
    reports = tmp_path / "mine"
    reports.mkdir()
    (reports / "100001.md").write_text("# Report\n\nThe barrage opened in 2019 [1].\n\n## References\n"
                                       "[1] Barrage https://barrage.example/\n", encoding="utf-8")
    (reports / "drb-52.md").write_text("# Another\n\nText.\n", encoding="utf-8")
    assert main(["--home", home, "import", "generic", str(demo_root()), "--system", "Mine",
                 "--reports", str(reports)]) == 0
    out = capsys.readouterr().out
    assert "no task with id" not in out and "reports found: 2 (2 new" in out, out
    rows = store(Path(home)).query("SELECT task FROM imported_reports WHERE system = 'mine' ORDER BY task")
    assert rows["task"].to_list() == ["drb.drb-52", "tvir.100001"]
