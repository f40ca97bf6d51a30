"""The home's Dagster instance configuration: run monitoring always, PostgreSQL storage for teams
when DREVAL_DAGSTER_POSTGRES_URL is set (the same code; the URL stays in the environment), and a
user's own dagster.yaml never overwritten."""
import pytest
import yaml
from dagster._config import process_config
from dagster._core.instance.config import dagster_instance_config
from dagster._core.instance.ref import InstanceRef
from dagster_postgres import DagsterPostgresStorage

from dreval_assets.config import Settings
from dreval_assets.defs.postgres_url import with_locked_driver
from dreval_assets.defs.runner import POSTGRES_URL_ENV, demo_root, open_instance

URL = "postgresql://dreval:secret@db.internal:5432/dagster"


def test_postgres_storage_is_configured_from_the_environment(home, monkeypatch):
    monkeypatch.setenv(POSTGRES_URL_ENV, URL)
    folder = home / "dagster"
    folder.mkdir(parents=True)
    from dreval_assets.defs import runner
    (folder / "dagster.yaml").write_text(runner.instance_yaml(True))
    text = (folder / "dagster.yaml").read_text()
    assert URL not in text and POSTGRES_URL_ENV in text  # the secret stays in the environment
    config, _ = dagster_instance_config(str(folder))
    assert config["run_monitoring"]["enabled"] is True
    storage = InstanceRef.from_dir(str(folder)).storage_data
    assert (storage.module_name, storage.class_name) == ("dreval_assets.defs.postgres", "PostgresStorage")
    checked = process_config(DagsterPostgresStorage.config_type(), yaml.safe_load(storage.config_yaml))
    assert checked.success, checked.errors
    assert checked.value["postgres_url"] == URL  # resolved from the environment by Dagster itself
    misspelt = process_config(DagsterPostgresStorage.config_type(), {"postgres_uri": URL})
    assert not misspelt.success


@pytest.mark.parametrize("url", ["postgresql://u:p@db:5432/d", "postgres://u:p@db:5432/d",
                                 "postgresql+psycopg2://u:p@db:5432/d", "POSTGRESQL://u:p@db:5432/d"])
def test_every_standard_url_form_opens_with_the_locked_driver(url):
    import sqlalchemy

    opened = with_locked_driver(url)
    assert opened == "postgresql+psycopg2://u:p@db:5432/d"
    sqlalchemy.create_engine(opened)  # the bare form needs psycopg 3, which is not installed


def test_an_unusable_url_is_refused_in_one_line(home, monkeypatch, capsys):
    from dreval_assets.cli import main

    monkeypatch.setenv(POSTGRES_URL_ENV, "mysql://u:p@db/d")
    assert main(["--home", str(home), "import", "generic", str(demo_root())]) == 2
    from cli_output import without_home_line

    err = without_home_line(capsys.readouterr().err)
    assert err.count("\n") == 1 and "expected postgresql://" in err and "p@db" not in err


def test_open_instance_writes_its_own_yaml_and_leaves_a_users_alone(home, monkeypatch):
    monkeypatch.delenv(POSTGRES_URL_ENV, raising=False)
    open_instance(Settings(home))
    path = home / "dagster" / "dagster.yaml"
    assert "postgres" not in path.read_text() and "run_monitoring" in path.read_text()
    path.write_text("telemetry:\n  enabled: false\nrun_retries:\n  enabled: false\n")  # the user's own
    open_instance(Settings(home))
    assert "run_monitoring" not in path.read_text()


def test_a_home_on_sqlite_runs_without_importing_dagster_postgres():
    """dagster-postgres is ~0.3 s of every run's start; only an instance that names its storage loads it."""
    import subprocess
    import sys
    probe = ("import sys\nfrom dreval_assets.defs import runner, definitions\n"
             "print('dagster_postgres' in sys.modules, 'dreval_assets.defs.postgres' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "False"]
