"""Live refresh end to end: a Wiki Live refresh against the loopback MediaWiki emulator registers
exactly the new Good Articles as task partitions, and the next `dreval run` materialises only those."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from loopback_mediawiki import HARROWGATE_FERRY, MARTA_ILVES, SALTCOTE_PIER_RAILWAY, LoopbackMediaWiki  # noqa: E402
from loopback_web import LoopbackWeb  # noqa: E402

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.fetch.api import JsonApi  # noqa: E402
from dreval_assets.fetch.live import LiveFetchConfig, LiveFetcher  # noqa: E402
from dreval_assets.fetch.safety import AllowList  # noqa: E402
from dreval_assets.live import refresh as live_refresh  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402


@pytest.fixture
def wiki(monkeypatch):
    with LoopbackWeb() as web:
        wiki = LoopbackMediaWiki(web)
        config = LiveFetchConfig(politeness_s=0.0, connect_timeout_s=2, read_timeout_s=2, total_timeout_s=5,
                                 backoff_base_s=0.01, max_attempts=2)
        # the allow-list is a constructor argument only: tests hand the refresh a loopback-allowed fetcher
        monkeypatch.setattr(live_refresh, "make_api", lambda: JsonApi(LiveFetcher(config, allow=AllowList(
            frozenset({web.address})))))
        monkeypatch.setenv("DREVAL_WLC_API", wiki.api_url)
        monkeypatch.setenv("DREVAL_WLC_CREATED_AFTER", "2025-05-01")  # the invented articles' window, every time
        yield wiki


def test_refresh_adds_exactly_the_new_articles_and_run_materialises_only_them(wiki, tmp_path, capsys):
    home = str(tmp_path / "home")
    wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, "2025-06-03T12:00:00Z")
    assert main(["--home", home, "refresh", "wlc"]) == 0
    assert "1 new task(s)" in capsys.readouterr().out
    reports = tmp_path / "writer"
    reports.mkdir()
    db = Store(Path(home) / "dreval.duckdb")
    first = db.query("SELECT task FROM registered_tasks")["task"].to_list()
    (reports / f"{first[0]}.md").write_text("# Saltcote Pier Railway\n\nThe railway opened in 1897 [1].\n\n"
                                            "## References\n[1] History https://history.example/pier\n")
    assert main(["--home", home, "add-system", "writer", "--reports", str(reports)]) == 0
    assert main(["--home", home, "run"]) == 0
    capsys.readouterr()

    wiki.add("Marta Ilves", MARTA_ILVES, "2025-06-05T12:00:00Z")
    wiki.add("Harrowgate ferry disaster", HARROWGATE_FERRY, "2025-06-04T12:00:00Z")
    assert main(["--home", home, "refresh", "wlc"]) == 0
    out = capsys.readouterr().out
    assert "2 new task(s)" in out and "window: created after 2025-05-01T00:00:00Z" in out
    for count in ("candidates: 3", "in_window: 3", "list_like: 0", "kept: 2", "unchanged: 1"):
        assert f"  {count}\n" in out  # the known article is a candidate again, unchanged
    new = sorted(set(db.query("SELECT task FROM registered_tasks")["task"]) - set(first))
    assert len(new) == 2 and all(k.startswith("wlc.live-") for k in new)
    assert main(["--home", home, "run"]) == 0
    out = capsys.readouterr().out
    assert "plan: 2 task partition(s) (new 2), 2 system x task partition(s) in 1 system(s) (new 2)" in out
    runs = [line for line in out.splitlines() if line.startswith("run ")]
    assert all(first[0] not in line for line in runs)  # the old task's partitions are not touched
    done = db.query("SELECT task FROM metric_scores WHERE system = 'writer' GROUP BY task")["task"].to_list()
    assert sorted(done) == sorted([*first, *new])

    assert main(["--home", home, "refresh", "wlc"]) == 0  # nothing new: nothing registered, nothing to run
    assert "0 new task(s)" in capsys.readouterr().out
    assert main(["--home", home, "run"]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_refresh_without_endpoints_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DREVAL_NEWS_URL", raising=False)
    assert main(["--home", str(tmp_path / "home"), "refresh", "miroeval"]) == 2
    assert "DREVAL_NEWS_URL" in capsys.readouterr().err


def test_the_refresh_job_registers_and_observes_the_new_tasks(wiki, tmp_path):
    from dagster import AssetKey, DagsterInstance

    from dreval_assets.config import Settings
    from dreval_assets.defs.definitions import build_definitions
    from dreval_assets.defs.runner import QUIET_LOGS

    home = tmp_path / "home"
    wiki.add("Marta Ilves", MARTA_ILVES, "2025-06-05T12:00:00Z")
    instance = DagsterInstance.ephemeral()
    job = build_definitions(Settings(home)).resolve_job_def("wlc_refresh_job")
    result = job.execute_in_process(instance=instance, run_config=QUIET_LOGS)
    assert result.success
    [key] = Store(home / "dreval.duckdb").query("SELECT task FROM registered_tasks")["task"].to_list()
    assert instance.get_dynamic_partitions("task") == [key]
    observed = instance.fetch_observations(AssetKey("registered_tasks"), limit=5).records
    assert [r.partition_key for r in observed] == [key]


def test_a_refresh_reaches_the_users_own_endpoint_on_loopback(tmp_path, capsys, monkeypatch):
    """The SSRF guard is for URLs from reports and pages: a MediaWiki (or SearXNG, news API) the user
    configured on 127.0.0.1 is their choice, with no test-only allow-list handed in."""
    with LoopbackWeb() as web:
        wiki = LoopbackMediaWiki(web)
        wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, "2025-06-03T12:00:00Z")
        monkeypatch.setenv("DREVAL_WLC_API", wiki.api_url)
        monkeypatch.setenv("DREVAL_WLC_CREATED_AFTER", "2025-05-01")
        monkeypatch.setenv("DREVAL_FETCH_POLITENESS", "0")
        assert main(["--home", str(tmp_path / "home"), "refresh", "wlc"]) == 0
    captured = capsys.readouterr()
    assert "1 new task(s)" in captured.out and "loopback" not in captured.out + captured.err


def test_the_allow_list_is_the_configured_endpoints_exact_host_and_port():
    allow = AllowList.for_endpoints("http://127.0.0.1:8888/search", "http://LocalHost/w/api.php", None, "ftp://x/")
    assert allow.allows("127.0.0.1", 8888) and allow.allows("localhost", 80)
    assert not allow.allows("127.0.0.1", 8889) and not allow.allows("127.0.0.1", 80)  # another port: refused


def test_a_refresh_in_which_every_call_failed_exits_non_zero(tmp_path, capsys, monkeypatch):
    """Every news request failing is not "0 new tasks": the exit status says the refresh failed."""
    with LoopbackWeb() as web:  # answers 404 to every path: a wrong or dead endpoint
        monkeypatch.setenv("DREVAL_NEWS_URL", f"http://{web.address}/v2/everything")
        monkeypatch.setenv("DREVAL_SEARCH_URL", f"http://{web.address}/search")
        monkeypatch.setenv("DREVAL_FETCH_POLITENESS", "0")
        monkeypatch.setenv("DREVAL_FETCH_MAX_ATTEMPTS", "1")
        topics = tmp_path / "topics.json"
        topics.write_text('{"energy": ["tidal power"], "transport": ["ferries"]}')
        monkeypatch.setenv("DREVAL_LIVE_TOPICS", str(topics))
        assert main(["--home", str(tmp_path / "home"), "refresh", "miroeval"]) == 1
    captured = capsys.readouterr()
    assert "0 new task(s)" in captured.out and "every call failed" in captured.err
