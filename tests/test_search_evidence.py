"""MiroEval's agentic evidence on the live web, against a loopback SearXNG-shaped search endpoint: a
statement no citation decides is searched; the page it finds is fetched once for every system that
needs it (and not again on a rerun: search answers and pages are cached); the verdict row has origin
`search` and the query; the per-statement bounds hold; a dead endpoint is N/A with a reason, never 0."""
import json
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from loopback_web import LoopbackWeb, page, send  # noqa: E402

from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SourceVerdict  # noqa: E402
from dreval_assets.benchmarks.miroeval.metrics import factuality_metrics, label  # noqa: E402
from dreval_assets.config import ConfigError, Settings  # noqa: E402
from dreval_assets.core.models import SandboxPage  # noqa: E402
from dreval_assets.fetch.api import JsonApi  # noqa: E402
from dreval_assets.fetch.chain import ChainFetcher  # noqa: E402
from dreval_assets.fetch.live import LiveFetchConfig, LiveFetcher  # noqa: E402
from dreval_assets.fetch.safety import AllowList  # noqa: E402
from dreval_assets.fetch.search import SandboxSearch, WebSearch, make_search, queries_for  # noqa: E402
from dreval_assets.judges.heuristic import HeuristicJudge  # noqa: E402
from dreval_assets.stages.frames import frame  # noqa: E402
from dreval_assets.stages.verdicts import judge_claims  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.pages import PageStore  # noqa: E402
from dreval_assets.store.search_cache import StoredSearchCache  # noqa: E402

FERRY = "The Lowmarsh ferry carried 41,200 passengers in 2023."
FERRY_PAGE = ("<html><head><title>Estuary Links annual figures</title></head><body><main><h1>Ferry traffic</h1>"
              "<p>The Lowmarsh ferry carried 41,200 passengers in 2023, up from 36,900 in 2022, according to the "
              "operator's annual figures published by Estuary Links.</p><p>Crossings ran every forty minutes "
              "from April to October, and the winter timetable kept two boats in service.</p></main></body></html>")
OTHER_PAGE = ("<html><head><title>Saltcote allotments</title></head><body><main><p>The allotment society of "
              "Saltcote planted new orchards along the sea wall and opened a seed library for members, "
              "who meet on the first Sunday of each month in the village hall.</p></main></body></html>")
TRAM = "Saltcote's tram depot opened in 1911 with twelve cars."


class SearchEngine:
    """`/search?q=...&format=json` answers the paths `rules` gives for the first rule word in the query."""

    def __init__(self, web: LoopbackWeb, rules: dict[str, list[str]], dead: bool = False):
        self.web, self.rules, self.dead, self.queries = web, rules, dead, []
        web.route("/search", self.handle)
        self.url = web.url("/search")

    def handle(self, h):
        params = parse_qs(urlsplit(h.path).query)
        query = params.get("q", [""])[0]
        self.queries.append(query)
        if self.dead:
            send(h, 503, b"search backend down", "text/plain")
            return
        paths = next((p for word, p in self.rules.items() if word.casefold() in query.casefold()), [])
        results = [{"url": self.web.url(p), "title": p.strip("/"), "content": ""} for p in paths]
        send(h, 200, json.dumps({"query": query, "results": results}).encode(), "application/json")


@pytest.fixture
def web():
    with LoopbackWeb() as server:
        server.route("/ferry", page(FERRY_PAGE)).route("/other", page(OTHER_PAGE))
        for n in range(6):
            server.route(f"/other{n}", page(OTHER_PAGE.replace("Saltcote", f"Saltcote {n}")))
        yield server


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "dreval.duckdb")
    s.ensure_schema()
    return s


def web_search(web, engine, store, max_queries=2, max_pages=3):
    config = LiveFetchConfig(politeness_s=0.0, connect_timeout_s=2, read_timeout_s=2, total_timeout_s=5,
                             backoff_base_s=0.01, max_attempts=1)
    allow = AllowList(frozenset({web.address}))
    fetcher = ChainFetcher(pages=PageStore(store), live=LiveFetcher(config, allow=allow))
    return WebSearch(JsonApi(LiveFetcher(config, allow=allow)), fetcher, engine.url, max_queries, max_pages,
                     StoredSearchCache(store))


def claims(rows):
    return frame("report_claims", [
        {"system": system, "task": "miroeval.t", "claim_id": cid, "kind": "uncited" if not urls else "sentence",
         "text": text, "section": "", "citation_indices": [1] * len(urls), "urls": urls, "unresolved_indices": [],
         "source_claim": cid, "extraction": "sentences"} for system, cid, text, urls in rows])


def fetched(rows):
    return frame("fetched_references", [
        {"system": system, "task": "miroeval.t", "url": url, "url_norm": url, "status": "ok", "backend": "live",
         "final_url": None, "title": "cited", "content_type": "text/html", "page_hash": "h", "sandbox_role": None,
         "na_reason": None, "detail": "", "http_status": 200, "charset": "utf-8", "blocked": None,
         "truncated": False} for system, url in rows])


def verdicts(claim_rows, search, fetched_rows=(), texts=None):
    return judge_claims(claims(claim_rows), fetched(list(fetched_rows)), texts or {}, HeuristicJudge(),
                        sandbox_evidence={"miroeval.t": []}, search=search)


def test_an_undecided_statement_is_searched_and_the_page_fetched_once_for_every_system(web, store):
    engine = SearchEngine(web, {"ferry": ["/ferry"]})
    cited = "The ferry timetable kept two boats in service in winter."
    rows = [("careful", "c1", FERRY, []), ("loose", "c1", FERRY, []),
            ("careful", "c2", cited, ["https://cited.example/a"])]
    cited_page = ([("careful", "https://cited.example/a")],
                  {"h": "In winter the ferry timetable kept two boats in service, the operator said in its "
                        "notice to passengers, while summer crossings ran every forty minutes from April."})
    frame_ = verdicts(rows, web_search(web, engine, store), *cited_page)
    found = frame_.filter(frame_["origin"] == "search")
    assert sorted(found["system"].to_list()) == ["careful", "loose"]
    assert set(found["verdict"]) == {"supported"}
    assert set(found["source"]) == {web.url("/ferry")}
    assert set(found["search_query"]) == {FERRY.rstrip(".") + "."}  # the first query: the statement itself
    assert web.hits["/ferry"] == 1  # one read for both systems
    # the cited claim was decided by its citation: never searched
    assert not any("timetable" in q for q in engine.queries)
    assert len(engine.queries) == len(set(engine.queries)) == len(queries_for(FERRY))  # once per query per run

    # a rerun (another run, the same store) asks the endpoint nothing and reads no page again
    before = (len(engine.queries), web.hits["/ferry"])
    again = verdicts(rows, web_search(web, engine, store), *cited_page)
    assert (len(engine.queries), web.hits["/ferry"]) == before
    assert again.filter(again["origin"] == "search")["verdict"].to_list() == ["supported", "supported"]


def test_the_bounds_hold_and_pages_are_judged_until_one_decides(web, store):
    engine = SearchEngine(web, {"tram": [f"/other{n}" for n in range(6)], "ferry": ["/other", "/ferry", "/other0"]})
    search = web_search(web, engine, store, max_queries=2, max_pages=2)
    frame_ = verdicts([("s", "c1", TRAM, []), ("s", "c2", FERRY, [])], search)
    tram = frame_.filter((frame_["claim_id"] == "c1") & (frame_["origin"] == "search"))
    ferry = frame_.filter((frame_["claim_id"] == "c2") & (frame_["origin"] == "search"))
    assert len([q for q in engine.queries if "tram" in q.casefold()]) <= 2
    assert tram.height == 2 and set(tram["verdict"]) <= {"unsupported", "unknown"}  # two reads, undecided
    assert sum(web.hits[f"/other{n}"] for n in range(6)) <= 2  # never more reads than the bound
    # the ferry statement: the first page decided nothing, the second supported it; no third read
    assert ferry["source"].to_list() == [web.url("/other"), web.url("/ferry")]
    assert ferry["verdict"].to_list()[-1] == "supported"
    assert web.hits["/other0"] <= 1


def test_an_unreadable_page_is_recorded_with_its_reason_and_the_next_one_judged(web, store):
    engine = SearchEngine(web, {"ferry": ["/gone", "/ferry"]})
    frame_ = verdicts([("s", "c1", FERRY, [])], web_search(web, engine, store))
    found = frame_.filter(frame_["origin"] == "search").sort("source")
    gone = found.filter(found["source"] == web.url("/gone")).row(0, named=True)
    assert gone["verdict"] == "unknown" and gone["na_reason"] == "data_accessibility" and gone["search_query"]
    assert found.filter(found["source"] == web.url("/ferry"))["verdict"].to_list() == ["supported"]


def test_a_dead_search_endpoint_is_na_with_a_reason_never_zero(web, store):
    engine = SearchEngine(web, {}, dead=True)
    frame_ = verdicts([("s", "c1", FERRY, []), ("s", "c2", TRAM, [])], web_search(web, engine, store))
    assert frame_.height > 0 and set(frame_["origin"]) == {"search"}
    assert set(frame_["verdict"]) == {"unknown"} and set(frame_["na_reason"]) == {"provider_failure"}
    assert all(s.startswith("search: ") for s in frame_["source"]) and frame_["search_query"].null_count() == 0
    assert not any("503" not in r and "search endpoint failed" not in r for r in frame_["reason"])
    # nothing cached: the next run asks again
    assert StoredSearchCache(store).get(engine.url, queries_for(FERRY)) == {}

    evidence = ReportEvidence("s", "miroeval.t", "miroeval", "heuristic", claims=[
        ClaimEvidence(r["claim_id"], "uncited", "", verdicts=(SourceVerdict(r["source"], r["verdict"], r["origin"],
                                                                           r["na_reason"], r["reason"]),))
        for r in frame_.iter_rows(named=True)])
    factuality = {m.metric: m for m in factuality_metrics(evidence)}["factuality"]
    assert factuality.value is None and factuality.na_reason == "provider_failure"


def test_a_search_that_finds_nothing_leaves_the_statement_unknown_without_failure(web, store):
    engine = SearchEngine(web, {})
    frame_ = verdicts([("s", "c1", TRAM, [])], web_search(web, engine, store))
    assert frame_.height == 0 and engine.queries  # searched, nothing found: no row, no invented verdict


def test_miroeval_label_treats_search_like_sandbox():
    def claim(*verdicts):
        return ClaimEvidence("c", "uncited", "", verdicts=tuple(SourceVerdict("u", v, o) for v, o in verdicts))

    assert label(claim(("supported", "search"))) == "RIGHT"
    assert label(claim(("contradicted", "search"))) == "WRONG"
    assert label(claim(("unsupported", "cited"), ("supported", "search"))) == "RIGHT"
    assert label(claim(("supported", "cited"), ("contradicted", "search"))) == "RIGHT"  # a decisive citation first
    assert label(claim(("contradicted", "search"), ("supported", "attachment"))) == "CONFLICT"
    assert label(claim(("unsupported", "sandbox"), ("supported", "search"))) == "RIGHT"
    assert label(claim(("unsupported", "search"))) == "UNKNOWN"


def test_queries_are_the_statement_then_its_key_terms():
    first, second = queries_for("The Lowmarsh ferry carried 41,200 passengers in 2023 [3] https://x.example/a.")
    assert "[3]" not in first and "x.example" not in first and first.startswith("The Lowmarsh ferry")
    assert second.split() == ["Lowmarsh", "ferry", "carried", "41,200", "passengers", "2023"]
    assert queries_for(FERRY, 1) == [FERRY]
    assert queries_for("") == []


def test_the_sandbox_stays_the_offline_default():
    search = make_search("sandbox")
    assert isinstance(search, SandboxSearch) and search.name == "sandbox" and not search.reads_web
    corpus = [SandboxPage(url="doc:1", title="Ferry", role="supportive", text=FERRY)]
    [outcome] = search.search_many([FERRY], [corpus])
    assert [p.url for p in outcome.pages] == ["doc:1"] and outcome.pages[0].query is None


def test_settings(monkeypatch, tmp_path):
    for name in ("DREVAL_EVIDENCE_SEARCH", "DREVAL_SEARCH_URL", "DREVAL_FETCH", "DREVAL_SEARCH_MAX_PAGES"):
        monkeypatch.delenv(name, raising=False)
    default = Settings.from_env(tmp_path)
    assert (default.evidence_search, default.search_max_queries, default.search_max_pages) == ("sandbox", 2, 3)
    # the offline default leaves the claim verdicts' settings version as it was
    import hashlib
    assert default.shaping_version("claim_verdicts") == "settings-" + hashlib.sha256(
        json.dumps({"judge": "heuristic"}).encode()).hexdigest()[:12]
    monkeypatch.setenv("DREVAL_EVIDENCE_SEARCH", "web")
    with pytest.raises(ConfigError, match="DREVAL_SEARCH_URL"):
        Settings.from_env(tmp_path)
    monkeypatch.setenv("DREVAL_SEARCH_URL", "https://search.example/search")
    with pytest.raises(ConfigError, match="DREVAL_FETCH=live"):
        Settings.from_env(tmp_path)
    monkeypatch.setenv("DREVAL_FETCH", "live")
    monkeypatch.setenv("DREVAL_SEARCH_MAX_PAGES", "5")
    live = Settings.from_env(tmp_path)
    assert live.search_max_pages == 5 and live.shaping_version("claim_verdicts") != default.shaping_version("claim_verdicts")
    monkeypatch.setenv("DREVAL_EVIDENCE_SEARCH", "google")
    with pytest.raises(ConfigError, match="sandbox, web"):
        Settings.from_env(tmp_path)


def test_the_users_search_endpoint_on_loopback_is_allowed_and_the_pages_it_finds_are_not(tmp_path):
    """DREVAL_SEARCH_URL on 127.0.0.1 (a local SearXNG) is the user's choice; the pages it returns
    (another port, another host) still go through the SSRF guard."""
    from dreval_assets.defs.resources import DrevalResource

    resource = DrevalResource(home=str(tmp_path / "home"), fetch_kind="live", evidence_search="web",
                              search_url="http://127.0.0.1:8888/search")
    searcher = resource.searcher()
    assert searcher.api.fetcher.allow.allows("127.0.0.1", 8888)
    assert not searcher.api.fetcher.allow.allows("127.0.0.1", 8080)
    assert not searcher.fetcher.live.allow.pairs  # cited and found pages: no exception
