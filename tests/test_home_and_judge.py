"""The home and the CLI (issue 32): which home a command works on (found the way git finds its
repository, printed first, created only by the commands that may), the judge the home was scored
with (used when the environment names none, a different one refused in one line, switched only by
`dreval judge set`, the earlier judge's scores kept beside), selections that match nothing, and a
plan that says why each partition is due (a DR³ policy re-runs DR³'s partitions only)."""
import json
import os
import shutil
from pathlib import Path

import pytest

from cli_output import without_home_line

from dreval_assets.cli import main
from dreval_assets.config import Settings
from dreval_assets.defs.runner import demo_root
from dreval_assets.home import JudgeChoice, find_home, record_judge, recorded_judge, resolve_judge
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.store.db import Store

JUDGE_VARIABLES = ("DREVAL_JUDGE", "DREVAL_JUDGE_MODEL", "OPENAI_BASE_URL", "DREVAL_JUDGE_MODE",
                   "DREVAL_JUDGE_VISION_MODEL", "DREVAL_JUDGE_EMBEDDING_MODEL", "DREVAL_POLICIES", "DREVAL_SUITES")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for name in JUDGE_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def one_system_home(home: Path) -> None:
    assert main(["--home", str(home), "import", "generic", str(demo_root()), "--system", "careful-scholar"]) == 0


# --- which home -----------------------------------------------------------------------------------

def test_the_home_is_the_flag_else_dreval_home_else_the_nearest_dreval_folder_above(tmp_path):
    project = tmp_path / "project"
    deep = project / "reports" / "2024"
    deep.mkdir(parents=True)
    (project / ".dreval").mkdir()
    assert find_home(None, env={}, cwd=deep).path == project / ".dreval"
    assert find_home(None, env={}, cwd=deep).how == "found above the current directory"
    assert find_home(None, env={"DREVAL_HOME": str(tmp_path / "h")}, cwd=deep).path == tmp_path / "h"
    assert find_home(str(tmp_path / "f"), env={"DREVAL_HOME": str(tmp_path / "h")}, cwd=deep).path == tmp_path / "f"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert find_home(None, env={}, cwd=elsewhere).how == "new"


@pytest.mark.parametrize("command", [["leaderboard"], ["run"], ["sql", "SELECT 1"], ["verify"], ["judge"],
                                     ["run", "--dry-run"]])
def test_a_command_that_may_not_create_a_home_refuses_where_there_is_none(tmp_path, capsys, command):
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no dreval home in " in err and "dreval init" in err
    assert not (tmp_path / ".dreval").exists()
    # a named folder that is not a home is refused too, and left as it was
    named = tmp_path / "named"
    named.mkdir()
    assert main(["--home", str(named), *command]) == 2
    assert "is not a dreval home" in capsys.readouterr().err and list(named.iterdir()) == []


def test_init_makes_a_home_here_and_every_command_below_finds_and_prints_it(tmp_path, capsys):
    assert main(["init"]) == 0
    assert (tmp_path / ".dreval" / "dreval.duckdb").is_file()
    capsys.readouterr()
    below = tmp_path / "notes" / "drafts"
    below.mkdir(parents=True)
    os.chdir(below)
    assert main(["sql", "SELECT 42 AS answer", "--format", "json"]) == 0
    out = capsys.readouterr()
    # the home's line is on stderr, first; stdout stays the command's own output
    assert out.err.splitlines()[0] == f"dreval: home {tmp_path / '.dreval'} (found above the current directory)"
    assert json.loads(out.out) == [{"answer": 42}]
    os.chdir(tmp_path)
    assert main(["init"]) == 0  # a second init in the same place changes nothing
    assert "already a dreval home" in capsys.readouterr().out


# --- the judge is part of the home ----------------------------------------------------------------

def test_the_environment_fills_in_over_the_homes_judge_and_a_different_one_is_a_conflict(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    assert resolve_judge(home, {}).recorded is None and resolve_judge(home, {}).choice.kind == "heuristic"
    remembered = JudgeChoice("openai", model="judge-7b", base_url="http://judge:s3cret@gpu-box:8000/v1")
    record_judge(home, remembered)
    assert "s3cret" in (home / "judge.json").read_text()  # the URL as given (a key is never in it)
    assert "api_key" not in (home / "judge.json").read_text() and (home / "judge.json").stat().st_mode & 0o077 == 0
    # the environment names none: the home's; it names the same one (or only a key): no conflict
    assert resolve_judge(home, {}).choice == remembered
    assert resolve_judge(home, {"DREVAL_JUDGE": "openai", "OPENAI_API_KEY": "sk-x"}).conflict == ""
    # a different model, base URL or kind is another judge: refused, naming how to switch, URL masked
    for env in ({"DREVAL_JUDGE": "heuristic"}, {"DREVAL_JUDGE_MODEL": "judge-70b"},
                {"OPENAI_BASE_URL": "http://other:8000/v1"}, {"DREVAL_JUDGE_MODE": "json"}):
        conflict = resolve_judge(home, env).conflict
        assert conflict and "dreval judge set" in conflict and "s3cret" not in conflict, env
        assert next(iter(env)) in conflict
    assert "judge:***@gpu-box" in remembered.describe()


def test_a_home_scored_by_an_llm_judge_keeps_it_refuses_another_and_switching_keeps_both(
        tmp_path, monkeypatch, capsys, llm):
    home = tmp_path / "home"
    one_system_home(home)
    task = ["--task", "dr3.dr3-en-004"]
    monkeypatch.setenv("DREVAL_JUDGE", "openai")
    monkeypatch.setenv("DREVAL_JUDGE_MODEL", "loopback-model")
    monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-stored")
    assert main(["--home", str(home), "run", *task]) == 0
    assert recorded_judge(home) == JudgeChoice("openai", model="loopback-model", base_url=llm.base_url)
    assert "sk-never-stored" not in (home / "judge.json").read_text()
    store = Store(home / "dreval.duckdb")
    scores = store.query("SELECT * FROM metric_scores ORDER BY ALL")
    assert "loopback-model" in set(scores["judge"])

    # a shell without the judge's variables (the key aside): the home's judge, not the offline one
    for name in ("DREVAL_JUDGE", "DREVAL_JUDGE_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name)
    capsys.readouterr()
    assert main(["--home", str(home), "run", *task]) == 0
    assert "nothing to do" in capsys.readouterr().out  # the offline judge would make every partition due
    settings, endpoint = Settings.from_env(home), OpenAIJudgeConfig.from_env(home)
    assert (settings.judge, settings.judge_model) == ("openai", "loopback-model")
    assert (endpoint.model, endpoint.base_url, endpoint.api_key) == ("loopback-model", llm.base_url, "sk-never-stored")
    assert main(["--home", str(home), "judge"]) == 0
    assert f"judge: openai loopback-model at {llm.base_url}" in capsys.readouterr().out

    # the environment names another judge: one line saying how to switch, and nothing is replaced
    monkeypatch.setenv("DREVAL_JUDGE", "heuristic")
    assert main(["--home", str(home), "run", *task]) == 2
    err = without_home_line(capsys.readouterr().err)
    assert err.count("\n") == 1 and "`dreval judge set heuristic`" in err and "loopback-model" in err
    assert store.query("SELECT * FROM metric_scores ORDER BY ALL").equals(scores)

    # switching is explicit; the previous judge's scores stay beside the new one's
    assert main(["--home", str(home), "judge", "set", "heuristic"]) == 0
    out = capsys.readouterr().out
    assert "judge: heuristic (was openai loopback-model" in out and "kept the scores made so far (loopback-model: " in out
    assert main(["--home", str(home), "run", *task]) == 0
    assert "(judge changed 1)" in capsys.readouterr().out
    judges = set(store.query("SELECT DISTINCT judge FROM metric_scores WHERE judge <> 'none'").to_series())
    assert judges == {"heuristic-v1"}
    board = store.query("SELECT DISTINCT judge FROM leaderboard WHERE suite = 'dr3' AND judge <> 'none'")
    assert set(board.to_series()) == {"heuristic-v1", "loopback-model"}
    assert main(["--home", str(home), "leaderboard", "--suite", "dr3", "--format", "json"]) == 0
    tables = {t["judge"] for t in json.loads(capsys.readouterr().out)}
    assert {"heuristic-v1", "loopback-model"} <= tables


# --- selections that match nothing -----------------------------------------------------------------

@pytest.fixture(scope="module")
def registered_home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("registered") / "home"
    one_system_home(home)
    return home


@pytest.mark.parametrize("selection, expected", [
    (["--task", "nosuch*"], "--task 'nosuch*' matches no task; tasks: "),
    (["--task", "dr3-en-04*"], "did you mean dr3-en-004"),
    (["--suite", "nosuch"], "--suite nosuch matches no task: benchmarks with tasks: dr3, drb, miroeval"),
    (["--suite", "tvr"], "did you mean tvir?"),
    (["--system", "careful"], "unknown system(s): careful; did you mean careful-scholar?"),
    (["--suite", "drb", "--task", "dr3*"], "--task 'dr3*' matches no task of drb"),
])
def test_a_selection_that_matches_nothing_is_an_error_naming_the_closest_names(registered_home, capsys, selection,
                                                                               expected):
    assert main(["--home", str(registered_home), "run", *selection]) == 2
    out = capsys.readouterr()
    assert expected in out.err and "nothing to do" not in out.out


# --- the plan says why -----------------------------------------------------------------------------

def test_the_plan_counts_partitions_by_reason_and_a_dr3_policy_reruns_only_dr3(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    one_system_home(home)
    reports = tmp_path / "own-reports"
    shutil.copytree(demo_root() / "systems" / "careful-scholar", reports)
    assert main(["--home", str(home), "add-system", "own", "--reports", str(reports)]) == 0
    selection = ["--task", "dr3.*"]  # two DR³ tasks ...
    capsys.readouterr()
    assert main(["--home", str(home), "run", "--dry-run", *selection]) == 0
    out = capsys.readouterr().out
    assert "plan: 2 task partition(s) (new 2), 4 system x task partition(s) in 2 system(s) (new 4)" in out
    assert "dry run: nothing was run" in out and "  own: new: 2 (dr3.dr3-en-004, dr3.dr3-en-011)" in out
    assert Store(home / "dreval.duckdb").query("SELECT count(*) FROM materialized_partitions").item() == 0

    selection = ["--task", "d*"]  # ... and the DRB task beside them
    assert main(["--home", str(home), "run", *selection]) == 0
    done = Store(home / "dreval.duckdb").materialised("metric_scores")
    # a home scored before homes remembered their judge: another judge is refused, not run over it
    remembered = (home / "judge.json").read_text()
    (home / "judge.json").unlink()
    monkeypatch.setenv("DREVAL_JUDGE", "openai")
    monkeypatch.setenv("DREVAL_JUDGE_MODEL", "m")
    capsys.readouterr()
    assert main(["--home", str(home), "run", *selection]) == 2
    assert "does not remember which: name the judge it was scored with by `dreval judge set" in \
        capsys.readouterr().err
    (home / "judge.json").write_text(remembered)
    for name in ("DREVAL_JUDGE", "DREVAL_JUDGE_MODEL"):
        monkeypatch.delenv(name)
    assert {t for _, t in done} == {"dr3.dr3-en-004", "dr3.dr3-en-011", "drb.drb-52"}

    (reports / "dr3-en-004.md").write_text((reports / "dr3-en-004.md").read_text() + "\nOne more sentence.\n")
    monkeypatch.setenv("DREVAL_POLICIES", '{"dr3.fa.unknown": "exclude"}')
    capsys.readouterr()
    assert main(["--home", str(home), "run", "--dry-run", *selection]) == 0
    out = capsys.readouterr().out
    assert ("plan: 0 task partition(s), 4 system x task partition(s) in 2 system(s) "
            "(policy dr3.fa.unknown changed 3, report changed 1), leaderboard") in out
    assert "  own: report changed: 1 (dr3.dr3-en-004)" in out  # DRB's partitions are not due
    assert Store(home / "dreval.duckdb").materialised("metric_scores") == done  # a dry run runs nothing
    # a policy of DRB's own: DRB's partitions only
    monkeypatch.setenv("DREVAL_POLICIES", '{"dr3.fa.unknown": "exclude", "drb.fact_accuracy.aggregate": "mean"}')
    capsys.readouterr()
    assert main(["--home", str(home), "run", "--dry-run", *selection]) == 0
    out = capsys.readouterr().out
    assert "policy drb.fact_accuracy.aggregate changed 2" in out and "policy dr3.fa.unknown changed 3" in out
    assert "  own: policy drb.fact_accuracy.aggregate changed: 1 (drb.drb-52)" in out
