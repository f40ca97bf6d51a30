"""Locators no fetcher reads are refused by their scheme, offline and live alike; our own sandbox
locators and web URLs are not."""
import pytest

from dreval_assets.core.models import FetchResult, SandboxPage
from dreval_assets.fetch.chain import OFFLINE_DETAIL, ChainFetcher

PAGE = SandboxPage(url="https://ferries.example/lowmarsh", title="Lowmarsh note", role="supportive",
                   text="The Lowmarsh ferry carried 41,200 passengers in 2023.")
DOC = SandboxPage(url="doc:Harbour survey", title="Harbour survey", role="supportive", text="Survey text.")
ODD = ["javascript:alert(1)", "file:///etc/passwd", "data:text/plain;base64,SGVsbG8=", "ftp://ferries.example/a.txt",
       "mailto:desk@ferries.example", "FILE:///C:/report.pdf"]


class RecordingLive:
    """A live fetcher that answers every URL it is asked for, and remembers which."""

    def __init__(self):
        self.asked = []

    def fetch_many(self, urls):
        self.asked += urls
        return [FetchResult(url=u, status="unknown", backend="live", na_reason="data_accessibility",
                            detail="asked live") for u in urls]


@pytest.mark.parametrize("live", [None, RecordingLive()], ids=["sandbox", "live"])
def test_unreadable_schemes_are_refused_by_name(live):
    results = ChainFetcher(live=live).fetch_many(ODD, [PAGE])
    schemes = ["javascript", "file", "data", "ftp", "mailto", "file"]
    assert [r.detail for r in results] == [f"refused: unsupported URL scheme {s!r} (only http and https are fetched)"
                                           for s in schemes]
    assert {r.status for r in results} == {"unknown"} and {r.na_reason for r in results} == {"data_accessibility"}
    assert [r.url for r in results] == ODD
    assert live is None or live.asked == []  # never sent to the web


def test_web_urls_sandbox_locators_and_titles_are_not_refused():
    live = RecordingLive()
    urls = ["https://ferries.example/lowmarsh", "doc:Harbour survey", "https://ferries.example/other",
            "Report: the ferry in 2023"]
    results = ChainFetcher(live=live).fetch_many(urls, [PAGE, DOC])
    assert [r.status for r in results] == ["ok", "ok", "unknown", "unknown"]
    assert live.asked == ["https://ferries.example/other", "Report: the ferry in 2023"]
    offline = ChainFetcher().fetch_many(urls[2:], [PAGE])
    assert [r.detail for r in offline] == [OFFLINE_DETAIL, OFFLINE_DETAIL]
