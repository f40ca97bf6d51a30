"""The Dagster UI as a user sees it beside the CLI, in a real headless chromium (tests/browser.py):
`dagster dev` (webserver and daemon) on a home the CLI filled shows the CLI's runs on the job page and
the timeline; a report edited on disk and observed shows its `reports` partition unsynced (stale);
a run launched from the UI ends with the leaderboard and results.duckdb, as a `dreval run` does.
Screenshots go to DREVAL_SCREENSHOT_DIR when set (else the test's tmp folder)."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import httpx
import pytest

from browser import browser_page, require_chromium
from dreval_assets.cli import main
from dreval_assets.defs.runner import demo_root

ROOT = Path(__file__).resolve().parents[1]
SYSTEM, TASK = "steady-analyst", "miroeval.37"
PARTITION = f"{SYSTEM}|{TASK}"
EVALUATION_ASSETS = ("reports", "trace_steps", "parsed_reports", "report_images", "fetched_references",
                     "claim_verdicts", "report_judgments", "metric_scores")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class DagsterDev:
    """`dagster dev` on a home, on a free loopback port, with GraphQL as the UI speaks it."""

    def __init__(self, home: Path, log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "DREVAL_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "dagster", "dev", "-w", str(ROOT / "workspace.yaml"), "-h", "127.0.0.1",
             "-p", str(self.port)], cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
            start_new_session=True)

    def query(self, text: str, **variables) -> dict:
        reply = httpx.post(f"{self.url}/graphql", json={"query": text, "variables": variables}, timeout=60).json()
        assert "errors" not in reply, reply
        return reply["data"]

    def wait_loaded(self, timeout_s: float = 180) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if self.query("{ assetNodes { id } }")["assetNodes"]:
                    self.query("mutation { setNuxSeen }")  # the community prompt the UI shows once
                    return
            except (httpx.HTTPError, AssertionError, KeyError, ValueError):
                pass
            time.sleep(1)
        raise AssertionError("dagster dev did not load the code location")

    def stop(self) -> None:
        os.killpg(self.process.pid, 15)  # dagster dev stops its webserver, daemon and code server
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, 9)


def until(condition, timeout_s: float, what: str, every_s: float = 2.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


def published_report(home: Path) -> str:
    with duckdb.connect(str(home / "results.duckdb"), read_only=True) as con:
        return con.execute("SELECT text FROM reports WHERE system = ? AND task = ?", [SYSTEM, TASK]).fetchone()[0]


@pytest.fixture(scope="module")
def ui(tmp_path_factory):
    require_chromium()
    tmp = tmp_path_factory.mktemp("ui")
    home, reports = tmp / "home", tmp / SYSTEM
    shutil.copytree(demo_root() / "extra_systems" / SYSTEM, reports)  # a folder system the test may edit
    assert main(["--home", str(home), "demo"]) == 0
    assert main(["--home", str(home), "add-system", SYSTEM, "--reports", str(reports)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    server = DagsterDev(home, tmp / "dagster-dev.log")
    try:
        server.wait_loaded()
        yield server, home, reports, Path(os.environ.get("DREVAL_SCREENSHOT_DIR") or tmp)
    finally:
        server.stop()


def test_cli_runs_on_the_job_page_and_timeline_an_edit_shows_stale_and_a_ui_run_is_published(ui):
    server, home, reports, shots = ui
    shots.mkdir(parents=True, exist_ok=True)
    cli_runs = server.query('{ runsOrError(filter: {pipelineName: "evaluate_job"}) { ... on Runs { results { '
                            'runId tags { key value } } } } }')["runsOrError"]["results"]
    assert len(cli_runs) == 2 and all(any(t["key"] == "dreval/pid" for t in r["tags"]) for r in cli_runs)

    with browser_page() as page:
        page.goto(f"{server.url}/locations/dreval/jobs/evaluate_job/runs")
        for run in cli_runs:  # each CLI run is listed by its short id on the job's own page
            page.get_by_text(run["runId"][:8]).first.wait_for(timeout=60_000)
        assert "You have not launched any runs" not in page.inner_text("body")
        page.screenshot(path=str(shots / "ui_job_page_cli_runs.png"))

        page.goto(f"{server.url}/overview/activity/timeline")
        page.get_by_text("leaderboard_job").first.wait_for(timeout=60_000)
        body = page.inner_text("body")
        assert "evaluate_job" in body and "No runs or scheduled ticks" not in body
        page.screenshot(path=str(shots / "ui_timeline_cli_runs.png"))

        # the sensor would evaluate the edit at once; switched off, the stale state stays to be seen
        sensor = server.query('{ sensorOrError(sensorSelector: {repositoryLocationName: "dreval", repositoryName: '
                              '"__repository__", sensorName: "registry_sensor"}) { ... on Sensor { sensorState '
                              '{ id } } } }')["sensorOrError"]["sensorState"]["id"]
        server.query("mutation($id: String!) { stopSensor(id: $id) { __typename } }", id=sensor)
        report = reports / "37.md"
        report.write_text(report.read_text().replace("combined capacity", "combined nameplate capacity", 1))

        page.goto(f"{server.url}/assets/report_sources")
        page.get_by_role("button", name="Observe").click()  # the UI's own observation run
        stale = ('{ assetNodeOrError(assetKey: {path: ["reports"]}) { ... on AssetNode { '
                 f'staleStatusByPartition(partitions: ["{PARTITION}", "careful-scholar|{TASK}"]) }} }} }}')
        statuses = until(lambda: (s := server.query(stale)["assetNodeOrError"]["staleStatusByPartition"])[0]
                         == "STALE" and s, 180, "the edited report's partition to show stale")
        assert statuses == ["STALE", "FRESH"]  # only the edited report
        page.goto(f"{server.url}/assets/reports?view=partitions&partition={PARTITION.replace('|', '%7C')}")
        page.get_by_text("Unsynced").first.wait_for(timeout=60_000)
        page.screenshot(path=str(shots / "ui_edited_report_unsynced.png"))

        # what the Materialize button sends for that partition: a run of the asset job, launched by the webserver
        launched = server.query(
            "mutation($params: ExecutionParams!) { launchRun(executionParams: $params) { __typename "
            "... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }",
            params={"selector": {"repositoryLocationName": "dreval", "repositoryName": "__repository__",
                                 "pipelineName": "__ASSET_JOB",
                                 "assetSelection": [{"path": [a]} for a in EVALUATION_ASSETS]},
                    "executionMetadata": {"tags": [{"key": "dagster/partition", "value": PARTITION},
                                                   {"key": "dagster/partition/system", "value": SYSTEM},
                                                   {"key": "dagster/partition/task", "value": TASK}]}})
        assert launched["launchRun"]["__typename"] == "LaunchRunSuccess", launched
        until(lambda: "combined nameplate capacity" in published_report(home), 420,
              "the UI's run to reach results.duckdb through the leaderboard")
        after = server.query('{ runsOrError(filter: {pipelineName: "leaderboard_job"}) { ... on Runs { results { '
                             'tags { key value } } } } }')["runsOrError"]["results"]
        assert {"key": "dagster/sensor_name", "value": "publish_after_ui_runs"} in after[0]["tags"]
        assert server.query(stale)["assetNodeOrError"]["staleStatusByPartition"] == ["FRESH", "FRESH"]
        page.goto(f"{server.url}/runs")
        page.get_by_text("leaderboard_job").first.wait_for(timeout=60_000)
        page.screenshot(path=str(shots / "ui_runs_after_ui_materialisation.png"))
