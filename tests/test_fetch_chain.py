"""One fetch per URL: sandbox first, then the pages store, then the live web; failures retried on demand."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from loopback_web import LoopbackWeb, page  # noqa: E402
from test_live_fetch import ARTICLE  # noqa: E402

from dreval_assets.releases.generic import load_generic  # noqa: E402
from dreval_assets.cli import main  # noqa: E402
from dreval_assets.core.models import SandboxPage  # noqa: E402
from dreval_assets.fetch.chain import ChainFetcher  # noqa: E402
from dreval_assets.fetch.live import LiveFetchConfig, LiveFetcher  # noqa: E402
from dreval_assets.fetch.safety import AllowList  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.pages import PageStore  # noqa: E402
from dreval_assets.store.registry import register_tasks  # noqa: E402


@pytest.fixture
def web():
    with LoopbackWeb() as server:
        server.route("/a", page(ARTICLE)).route("/b", page(ARTICLE.replace("41,200", "41,300")))
        yield server


@pytest.fixture
def pages(tmp_path):
    store = Store(tmp_path / "pages.duckdb")
    store.ensure_schema()
    return PageStore(store)


def chain(web, pages, refetch_failed=False):
    live = LiveFetcher(LiveFetchConfig(politeness_s=0, max_attempts=1), allow=AllowList(frozenset({web.address})))
    return ChainFetcher(pages=pages, live=live, refetch_failed=refetch_failed)


def test_each_url_is_fetched_once_across_reports_and_runs(web, pages):
    first = chain(web, pages).fetch_many([web.url("/a"), web.url("/b"), web.url("/a#section")], [])
    second = chain(web, pages).fetch_many([web.url("/b"), web.url("/a?utm_source=feed")], [])
    assert [r.status for r in first + second] == ["ok"] * 5
    assert web.hits == {"/a": 1, "/b": 1}
    assert [r.backend for r in second] == ["cache", "cache"] and "41,300" in second[0].text
    assert second[1].url == web.url("/a?utm_source=feed")  # results keep the URL as cited
    assert pages.store.query("SELECT count(*) FROM pages").item() == 2


def test_sandbox_pages_win_before_any_network(web, pages):
    sandbox = [SandboxPage(url=web.url("/a"), title="Sandbox copy", role="supportive", text="sandbox text " * 30)]
    [result] = chain(web, pages).fetch_many([web.url("/a")], sandbox)
    assert result.backend == "sandbox" and result.role == "supportive" and web.total_hits == 0


def test_failures_are_remembered_and_retried_only_on_request(web, pages):
    urls = [web.url("/a"), web.url("/gone")]
    assert [r.status for r in chain(web, pages).fetch_many(urls, [])] == ["ok", "unknown"]
    cached = chain(web, pages).fetch_many(urls, [])
    assert [r.backend for r in cached] == ["cache", "cache"] and web.hits["/gone"] == 1
    web.route("/gone", page(ARTICLE))  # the page came back
    retried = chain(web, pages, refetch_failed=True).fetch_many(urls, [])
    assert [r.status for r in retried] == ["ok", "ok"] and web.hits == {"/a": 1, "/gone": 2}


def test_offline_mode_reads_the_store_but_never_the_network(web, pages):
    chain(web, pages).fetch_many([web.url("/a")], [])
    offline = ChainFetcher(pages=pages)
    known, unknown = offline.fetch_many([web.url("/a"), web.url("/b")], [])
    assert known.status == "ok" and known.backend == "cache"
    assert unknown.status == "unknown" and "live fetching is off" in unknown.detail
    assert web.hits == {"/a": 1}


HOSTILE_REPORT = """# Lowmarsh ferry

The Lowmarsh ferry carried 41,200 passengers in 2023 [1].
Estuary Links added a third vessel named Curlew in March 2023 [2].
Average crossing time fell to 14 minutes after the new pier opened [3].

## References
[1] Internal page {loopback}
[2] Instance metadata http://169.254.169.254/latest/meta-data/
[3] Local file file:///etc/passwd
"""


def test_live_pipeline_refuses_inward_urls_without_contacting_them(web, home, tmp_path, monkeypatch):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "tasks.jsonl").write_text(json.dumps({"id": "ferry", "query": "Report on the Lowmarsh ferry."}) + "\n")
    reports = tmp_path / "hostile"
    reports.mkdir()
    (reports / "ferry.md").write_text(HOSTILE_REPORT.format(loopback=web.url("/a")))
    store = Store(home / "dreval.duckdb")
    store.ensure_schema()
    register_tasks(store, load_generic(bench).tasks, source="test")
    monkeypatch.setenv("DREVAL_FETCH", "live")
    assert main(["--home", str(home), "add-system", "hostile", "--reports", str(reports)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    verdicts = store.query("SELECT source, verdict, na_reason, reason FROM claim_verdicts ORDER BY claim_id")
    assert verdicts["verdict"].to_list() == ["unknown"] * 3
    assert set(verdicts["na_reason"]) == {"data_accessibility"}
    reasons = verdicts["reason"].to_list()
    assert "loopback" in reasons[0] and "metadata" in reasons[1] and "unsupported URL scheme 'file'" in reasons[2]
    assert all(r.startswith("refused: ") for r in reasons)
    assert web.total_hits == 0


def test_groups_share_one_fetch_per_url_and_keep_their_own_sandbox(web, pages):
    sandbox = [SandboxPage(url=web.url("/b"), title="Sandbox b", role="distractor", text="sandbox words " * 30)]
    first, second = chain(web, pages).fetch_groups([
        ([web.url("/a"), web.url("/b")], sandbox),
        ([web.url("/b"), web.url("/a#x")], []),
    ])
    assert [r.backend for r in first] == ["live", "sandbox"]
    assert [r.backend for r in second] == ["live", "live"] and second[1].url == web.url("/a#x")
    assert web.hits == {"/a": 1, "/b": 1}
