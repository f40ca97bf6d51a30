"""Wiki Live refresh against the loopback MediaWiki emulator: the contamination window, the selection
as the paper's (metadata, list-like articles, top N across topics, a reason on every candidate), the
full gold in batched chunks, the API's etiquette (pace, maxlag, continuation), and the ways one article
can go wrong."""
import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from loopback_mediawiki import (  # noqa: E402
    HARROWGATE_FERRY, MARTA_ILVES, SALTCOTE_PIER_RAILWAY, Fault, LoopbackMediaWiki, filler_article, long_article)
from loopback_web import LoopbackWeb  # noqa: E402

from dreval_assets.core.report_parser import is_checkable_fact  # noqa: E402
from dreval_assets.fetch.api import ApiError, JsonApi  # noqa: E402
from dreval_assets.fetch.live import LiveFetchConfig, LiveFetcher  # noqa: E402
from dreval_assets.fetch.safety import AllowList  # noqa: E402
from dreval_assets.judges.heuristic import HeuristicJudge, template_handlers  # noqa: E402
from dreval_assets.judges.prompts import load_template, render  # noqa: E402
from dreval_assets.benchmarks.wlc.live.wikilive import Known, Window, refresh_wikilive  # noqa: E402
from dreval_assets.benchmarks.wlc.live.wikilive_gold import chunk_article  # noqa: E402
from dreval_assets.benchmarks.wlc.live.wikilive_text import (  # noqa: E402
    GoldStatements, answer_gold_statements, extract_to_markdown, offline_gold_statements)

WINDOW = Window(datetime(2025, 5, 1, tzinfo=timezone.utc), datetime(2025, 7, 1, tzinfo=timezone.utc))
CONFIG = LiveFetchConfig(politeness_s=0.0, connect_timeout_s=2, read_timeout_s=2, total_timeout_s=5,
                         backoff_base_s=0.01, max_attempts=2)


@pytest.fixture(scope="module")
def web():
    with LoopbackWeb() as server:  # one server for the module
        yield server


@pytest.fixture
def wiki(web):
    return LoopbackMediaWiki(web)  # a fresh wiki per test: it takes over the API route


@pytest.fixture
def api(web):
    return JsonApi(LiveFetcher(CONFIG, allow=AllowList(frozenset({web.address}))))


@pytest.fixture
def judge():
    return HeuristicJudge({**template_handlers(), "wlc/gold_statements": answer_gold_statements})


def stamp(day: int, hour: int = 12, month: int = 6) -> str:
    return f"2025-{month:02d}-{day:02d}T{hour:02d}:00:00Z"


def villages(wiki, n, first_day=1, **flags):
    return [wiki.add(f"Village {i}", filler_article(f"Village {i}", i), stamp(first_day + i), **flags)
            for i in range(n)]


def run(api, wiki, judge, **kwargs):
    return refresh_wikilive(api, wiki.api_url, judge, kwargs.pop("window", WINDOW), **kwargs)


def titles(result):
    return sorted(t.original_id for t, _ in result.tasks)


def by_title(result):
    return {c.title: c for c in result.candidates}


# ------------------------------------------------------------------------------------ the window

def test_articles_created_in_the_window_become_tasks_with_their_metadata(wiki, api, judge):
    pier = wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, stamp(3), categories=["Railway lines in Westmarch"],
                    views=1234, refs=5)
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(5), categories=["1961 births", "Lichenologists"])
    result = run(api, wiki, judge)
    assert titles(result) == ["Marta Ilves", "Saltcote Pier Railway"]
    task, c = next((t, c) for t, c in result.tasks if c.pageid == pier.pageid)
    assert task.key == f"wlc.live-{pier.pageid}" and task.language == "en"
    assert task.attributes == {"release": "live", "title": "Saltcote Pier Railway", "pageid": str(pier.pageid),
                               "url": "https://en.wikipedia.org/wiki/Saltcote_Pier_Railway",
                               "ga_timestamp": stamp(3), "created_at": "2025-05-04T12:00:00Z",
                               "revid": str(pier.revid), "topic": "Engineering and technology"}
    assert (c.created_at, c.ga_at) == (datetime(2025, 5, 4, 12, tzinfo=timezone.utc),
                                      datetime(2025, 6, 3, 12, tzinfo=timezone.utc))
    assert (c.views, c.reference_urls, c.external_links) == (1234, 5, 11)  # 5 sources + 5 archive copies + 1 site
    assert (c.sections, c.subsections, c.bytes) == (3, 2, len(pier.wikitext.encode()))
    assert (c.category, c.kept, c.outcome, c.rank) == ("Railway lines in Westmarch", True, "task", 1)
    assert by_title(result)["Marta Ilves"].topic == "Natural sciences"


def test_an_old_article_newly_promoted_is_dropped_as_created_before_the_window(wiki, api, judge):
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(5))
    wiki.add("Harrowgate ferry disaster", HARROWGATE_FERRY, stamp(20), created="2014-03-02T09:00:00Z")
    result = run(api, wiki, judge)
    assert titles(result) == ["Marta Ilves"]
    old = by_title(result)["Harrowgate ferry disaster"]
    assert old.outcome == "dropped" and old.in_window is False and old.rank is None
    assert old.reason.startswith("created before the window: created 2014-03-02T09:00:00Z")
    assert result.counts()["created_before_window"] == 1
    # only the old article's metadata is never asked: it is dropped before the paid and batched calls
    asked = {p for c in wiki.calls if c.get("prop") != "revisions" or "rvlimit" not in c
             for p in c.get("pageids", "").split("|") if p}
    assert str(wiki.articles[old.pageid].pageid) not in asked


def test_creation_is_the_first_revision_asked_page_by_page(wiki, api, judge):
    made = villages(wiki, 3)
    run(api, wiki, judge)
    firsts = [c for c in wiki.calls if c.get("prop") == "revisions" and "rvlimit" in c]
    assert sorted(c["pageids"] for c in firsts) == sorted(str(a.pageid) for a in made)
    assert all(c["rvdir"] == "newer" and c["rvlimit"] == "1" and c["rvprop"] == "ids|timestamp" for c in firsts)


def test_discovery_stops_at_the_window_start_and_follows_continue(wiki, api, judge):
    villages(wiki, 5)  # promoted June 2-6
    wiki.add("Earlier Promotion", filler_article("Earlier Promotion", 9), stamp(20, month=4))  # before the window
    result = run(api, wiki, judge, page_size=2)
    assert len(result.candidates) == 5 and "Earlier Promotion" not in by_title(result)
    listed = [c for c in wiki.calls if c.get("list") == "categorymembers"]
    assert len(listed) == 3 and all("cmcontinue" in c for c in listed[1:])  # 2 + 2 + (1 and the stop)


def test_an_article_created_after_the_window_end_is_dropped(wiki, api, judge):
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(5, month=7), created=stamp(2, month=7))
    [c] = run(api, wiki, judge).candidates
    assert c.outcome == "dropped" and c.reason.startswith("created after the window")


# ---------------------------------------------------------------------------------- the selection

def test_selection_keeps_the_top_n_across_topics_and_says_why_for_every_other(wiki, api, judge):
    geo = [wiki.add(f"Village {i}", filler_article(f"Village {i}", i), stamp(2 + i), refs=10 - i,
                    categories=["Villages in Westmarch"]) for i in range(4)]
    war = [wiki.add(f"Battle of Ford {i}", filler_article(f"Battle of Ford {i}", 20 + i), stamp(10 + i), refs=2 - i,
                    categories=["Battles involving Westmarch"]) for i in range(2)]
    listing = wiki.add("List of mills in Lowmarsh", filler_article("Mills", 40), stamp(15), refs=30)
    result = run(api, wiki, judge, limit=3)
    kept = sorted(c.title for c in result.candidates if c.kept)
    assert kept == ["Battle of Ford 0", "Village 0", "Village 1"]  # round 1: each topic's best; round 2: geography
    rows = by_title(result)
    assert [rows[a.title].rank for a in geo + war] == [1, 2, 3, 4, 5, 6]
    assert rows["Village 2"].reason == ("not in the top 3 across topics: rank 3 of 6, "
                                        "topic Geography and places has 2 kept")
    assert rows["Battle of Ford 1"].outcome == "dropped" and rows["Battle of Ford 0"].topic == "Warfare"
    assert rows[listing.title].list_like and rows[listing.title].rank is None
    assert rows[listing.title].reason.startswith("list-like")
    assert all(c.reason for c in result.candidates)
    counts = result.counts()
    assert (counts["candidates"], counts["in_window"], counts["list_like"], counts["kept"]) == (7, 7, 1, 3)
    # text and gold only for the kept ones
    extracted = {p for c in wiki.calls if "extracts" in c.get("prop", "") for p in c["pageids"].split("|")}
    assert extracted == {str(rows[t].pageid) for t in kept}


def test_a_body_of_tables_is_list_like(wiki, api, judge):
    rows = "\n".join(f"|-\n| {1900 + i} || Harrowgate Cup winner number {i} of the county league" for i in range(30))
    wiki.add("Harrowgate Cup finals", "Finals.", stamp(3),
             wikitext="The Harrowgate Cup is a football cup.<ref>https://cup.example.org/a</ref>\n\n== Finals ==\n"
                      "{| class=\"wikitable\"\n" + rows + "\n|}\n")
    [c] = run(api, wiki, judge).candidates
    assert c.list_like and c.outcome == "dropped" and c.reference_urls == 1


def test_metadata_follows_every_continuation(wiki, api, judge):
    made = villages(wiki, 3)
    wiki.articles[made[0].pageid].extlinks = [f"https://e{i}.example.org/" for i in range(620)]
    wiki.articles[made[1].pageid].categories = [f"Villages in district {i}" for i in range(505)]
    wiki.pageviews_per_call = 1
    wiki.max_result_chars = 10  # one page's wikitext per answer
    result = run(api, wiki, judge)
    rows = by_title(result)
    assert rows["Village 0"].external_links == 620 and rows["Village 1"].topic == "Geography and places"
    assert all(c.views == 600 for c in result.candidates) and len(result.tasks) == 3
    names = ("elcontinue", "clcontinue", "pvipcontinue", "rvcontinue")
    sent = {name for c in wiki.calls for name in names if name in c}
    assert sent == {"elcontinue", "clcontinue", "pvipcontinue", "rvcontinue"}


def test_views_are_na_when_pageviewinfo_has_none(wiki, api, judge):
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(5), views=None)
    [c] = run(api, wiki, judge).candidates
    assert c.views is None and c.outcome == "task"


# ------------------------------------------------------------------------------------ the gold

def test_a_published_size_article_gives_the_full_gold_in_chunks(wiki, api, judge):
    wiki.add("Emberton", long_article("Emberton"), stamp(3))
    [(task, c)] = run(api, wiki, judge, chunk_chars=3000).tasks
    assert 95 <= len(task.gold_facts) <= 101 and c.n_statements == len(task.gold_facts)
    assert c.gold_chunks == len(chunk_article(task.reference_article, 3000)) >= 3
    assert len(set(task.gold_facts)) == len(task.gold_facts)
    assert any("1799" in f for f in task.gold_facts)  # the last section is there: no cap of 40


def test_chunks_are_whole_sections_under_the_budget():
    article = "# T\n\nLead one.\n\n## A\n\n" + "\n\n".join(["Para " + "x" * 50] * 6) + "\n\n## B\n\nShort.\n"
    chunks = chunk_article(article, 200)
    assert all(len(c) <= 200 for c in chunks) and chunks[0].startswith("Lead one.")
    assert sum(c.count("Para ") for c in chunks) == 6
    assert all(c.startswith("## A") for c in chunks[1:-1])  # a long section's heading repeats in its parts
    assert chunks[-1].endswith("## B\n\nShort.")


def test_a_failed_chunk_means_no_task_this_time(wiki, api):
    def flaky(variables):
        if "Period 3" in variables["article"]:
            raise RuntimeError("no answer for this part")
        return answer_gold_statements(variables)
    wiki.add("Emberton", long_article("Emberton"), stamp(3))
    [c] = run(api, wiki, HeuristicJudge({**template_handlers(), "wlc/gold_statements": flaky}),
              chunk_chars=3000).candidates
    assert c.outcome == "retry" and c.kept and c.n_statements is None
    assert "no gold statements" in c.reason and "of" in c.reason and "tried again next refresh" in c.reason


def test_a_judge_that_finds_no_statement_means_no_task(wiki, api):
    nothing = {**template_handlers(), "wlc/gold_statements": lambda v: (GoldStatements(statements=[" ", ""]), {})}
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(1))
    [c] = run(api, wiki, HeuristicJudge(nothing)).candidates
    # the judge's finding, not a system's failure
    assert c.outcome == "failed" and "found none" in c.reason and c.na_reason == "pipeline_failure"


def test_gold_statements_are_the_article_checkable_facts(wiki, api, judge):
    wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, stamp(3))
    [(task, _)] = run(api, wiki, judge).tasks
    facts = task.gold_facts
    assert len(facts) == 13 and len(set(facts)) == len(facts)
    assert all(is_checkable_fact(f.split(": ", 1)[-1]) for f in facts)
    assert "Construction began in March 1897 and cost £4,350." in facts
    assert "Saltcote Pier Railway: It reopened on 30 April 1955 with new steel piles." in facts  # subject named
    assert not any("popular with visitors" in f for f in facts)
    assert not any("List of pier railways" in f for f in facts)  # navigation section


def test_offline_gold_statements_unwrap_dedupe_and_cap_only_when_asked():
    article = ("# Lowmarsh Lock\n\nLowmarsh Lock was built in 1791 by the\nengineer Thomas Garrow for the Harrow "
               "Navigation Company.\n\nLowmarsh Lock was built in 1791 by the engineer Thomas Garrow for the\n"
               "Harrow Navigation Company.\n\n## Use\n\n- The lock passed 3,400 boats in 1850 according to Harrow "
               "records.\n- It is nice.\n\n## References\n\nGarrow, Thomas (1792). Report to the Harrow "
               "Navigation Company. London.")
    assert offline_gold_statements(article, "Lowmarsh Lock") == [
        "Lowmarsh Lock was built in 1791 by the engineer Thomas Garrow for the Harrow Navigation Company.",
        "The lock passed 3,400 boats in 1850 according to Harrow records."]
    assert len(offline_gold_statements(SALTCOTE_PIER_RAILWAY, "Saltcote Pier Railway", 3)) == 3
    assert len(offline_gold_statements(long_article("Emberton"), "Emberton")) == 101  # uncapped


def test_the_prompt_renders_with_the_request_variables():
    _, version = load_template("wlc/gold_statements")
    rendered = render("wlc/gold_statements", {"title": "Marta Ilves", "expected": 12, "article": "ARTICLE BODY"})
    assert "Marta Ilves" in rendered and "about 12 such facts" in rendered and "ARTICLE BODY" in rendered
    assert "at most" not in rendered and version and "{" not in rendered


# ------------------------------------------------------------------------- known and edited articles

def test_a_known_article_at_the_same_revision_costs_no_text_or_gold(wiki, api, judge):
    made = villages(wiki, 2)
    known = {made[0].pageid: Known(f"wlc.live-{made[0].pageid}", made[0].revid, None)}
    result = run(api, wiki, judge, known=known)
    rows = by_title(result)
    assert rows["Village 0"].outcome == "unchanged" and titles(result) == ["Village 1"]
    extracted = {p for c in wiki.calls if "extracts" in c.get("prop", "") for p in c["pageids"].split("|")}
    assert str(made[0].pageid) not in extracted


def test_an_edited_known_article_is_made_again_outside_the_selection(wiki, api, judge):
    made = villages(wiki, 2, refs=1)
    known = {made[0].pageid: Known(f"wlc.live-{made[0].pageid}", made[0].revid,
                                   datetime(2025, 5, 3, tzinfo=timezone.utc))}
    wiki.edit(made[0].pageid, MARTA_ILVES, stamp(20))
    result = run(api, wiki, judge, known=known, limit=1)
    rows = by_title(result)
    assert rows["Village 0"].edited and rows["Village 0"].outcome == "task" and rows["Village 0"].rank is None
    assert "edited upstream since" in rows["Village 0"].reason
    assert rows["Village 1"].kept  # the edited one does not take the only slot
    firsts = [c for c in wiki.calls if "rvlimit" in c]
    assert [c["pageids"] for c in firsts] == [str(made[1].pageid)]  # the known creation date is not asked again


# ---------------------------------------------------------------------------- pace and maxlag

def test_the_politeness_gap_holds_across_every_call_of_a_refresh(web, wiki, judge):
    clock, waits = [0.0], []

    async def sleep(seconds):
        waits.append(seconds)
        clock[0] += seconds

    fetcher = LiveFetcher(LiveFetchConfig(politeness_s=0.25, connect_timeout_s=2, read_timeout_s=2, total_timeout_s=5),
                          allow=AllowList(frozenset({web.address})), clock=lambda: clock[0], sleep=sleep)
    villages(wiki, 3)
    result = run(JsonApi(fetcher), wiki, judge)
    assert len(result.tasks) == 3 and result.api_calls == len(wiki.calls) >= 8
    assert waits == [0.25] * (len(wiki.calls) - 1)  # the clock stands still: every later call waits the full gap


def test_every_call_sends_maxlag_and_a_maxlag_answer_is_waited_out(wiki, api, judge):
    villages(wiki, 2)
    wiki.lagged(2, retry_after=3)
    waits = []
    result = run(api, wiki, judge, sleep=waits.append)
    assert waits == [3.0, 3.0] and result.lag_waits == [3.0, 3.0] and len(result.tasks) == 2
    assert all(c.get("maxlag") == "5" for c in wiki.calls)


def test_a_wiki_that_stays_lagged_fails_the_refresh(wiki, api, judge):
    villages(wiki, 1)
    wiki.lagged(10, retry_after=1)
    with pytest.raises(ApiError, match="maxlag"):
        run(api, wiki, judge, sleep=lambda s: None)


def test_the_user_agent_names_the_client(wiki, api, judge, web):
    assert "dreval" in CONFIG.user_agent and "(" in CONFIG.user_agent


# -------------------------------------------------------------------------------------- bad input

def test_bad_articles_are_dropped_with_their_reasons_and_the_rest_still_made(wiki, api, judge):
    good = wiki.add("Marta Ilves", MARTA_ILVES, stamp(1))
    wiki.add("No Extract Hall", None, stamp(2), wikitext="No Extract Hall is a hall built in 1900.")
    wiki.add("Headings Only Tower", "\n\n\n== History ==\n\n\n== References ==", stamp(4),
             wikitext="Tower built in 1900.")
    wiki.add("Old Name Mill", "Old Name Mill may refer to Millbrook Mill.", stamp(5), redirect=True)
    wiki.add("Vanished Quay", HARROWGATE_FERRY, stamp(6), deleted=True)
    result = run(api, wiki, judge, batch_size=50)
    assert [t.key for t, _ in result.tasks] == [f"wlc.live-{good.pageid}"]
    rows = by_title(result)
    assert "has no extract" in rows["No Extract Hall"].reason and rows["No Extract Hall"].outcome == "failed"
    assert "no text (empty, or headings only)" in rows["Headings Only Tower"].reason
    assert "redirect" in rows["Old Name Mill"].reason and rows["Old Name Mill"].outcome == "dropped"
    assert "missing" in rows["Vanished Quay"].reason


def test_a_failing_extracts_call_is_a_retry_for_its_article_only(wiki, api, judge):
    made = villages(wiki, 3)
    wiki.fail_extract(made[1].pageid, status=503, times=4)  # batch call and its single retry, 2 attempts each
    result = run(api, wiki, judge)
    assert titles(result) == ["Village 0", "Village 2"]
    c = by_title(result)["Village 1"]
    assert c.outcome == "retry" and c.kept and "503" in c.reason and "tried again next refresh" in c.reason


def test_a_mediawiki_error_object_for_one_article_is_its_reason(wiki, api, judge):
    made = villages(wiki, 2)
    error = json.dumps({"error": {"code": "internal_api_error_DBQueryError", "info": "database hiccup"}}).encode()
    wiki.fail_extract(made[1].pageid, status=200, body=error, content_type="application/json")
    result = run(api, wiki, judge)
    assert titles(result) == ["Village 0"]
    assert "MediaWiki error internal_api_error_DBQueryError: database hiccup" in by_title(result)["Village 1"].reason


def test_a_500_on_discovery_raises_api_error(wiki, api, judge):
    villages(wiki, 2)
    wiki.fail_discovery(status=500)
    with pytest.raises(ApiError, match="HTTP 500"):
        run(api, wiki, judge)
    assert {c.get("list") for c in wiki.calls} == {"categorymembers"}  # nothing else asked (the fetcher retried)


def test_a_500_on_a_later_discovery_page_raises_too(wiki, api, judge):
    villages(wiki, 4)
    wiki.faults.append(Fault(lambda params, _: "cmcontinue" in params, 502))
    with pytest.raises(ApiError, match="502"):
        run(api, wiki, judge, page_size=2)


@pytest.mark.parametrize("body, message", [
    (b"<html>maintenance</html>", "not JSON"),
    (json.dumps({"error": {"code": "ratelimited", "info": "slow down"}}).encode(), "MediaWiki error ratelimited"),
    (json.dumps({"query": {}}).encode(), "no query.categorymembers"),
    (json.dumps([1, 2]).encode(), "not a JSON object"),
])
def test_broken_discovery_answers_raise_with_the_reason(wiki, api, judge, body, message):
    villages(wiki, 1)
    wiki.fail_discovery(status=200, body=body)
    with pytest.raises(ApiError, match=message):
        run(api, wiki, judge)


def test_bad_category_entries_are_reasons_not_crashes(wiki, api, judge):
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(1))
    broken = {"query": {"categorymembers": [{"title": "No Id"}, "junk",
                                            {"pageid": 5, "title": "Undated", "timestamp": "yesterday"}]}}
    wiki.fail_discovery(status=200, body=json.dumps(broken).encode(), times=1)
    result = run(api, wiki, judge)
    assert result.tasks == [] and len(result.problems) == 3
    assert any("not ISO 8601" in s for s in result.problems) and any("no valid pageid" in s for s in result.problems)


def test_the_emulator_rejects_what_mediawiki_rejects(wiki, api):
    base = {"action": "query", "format": "json", "formatversion": 2}
    answer = api.get(wiki.api_url, {**base, "prop": "extracts", "explaintext": 1, "exsectionformat": "wikitext",
                                    "pageids": "1"})
    assert answer["error"]["code"] == "badvalue"  # TextExtracts' section formats are plain, wiki and raw
    answer = api.get(wiki.api_url, {**base, "prop": "revisions", "rvlimit": 1, "pageids": "1|2"})
    assert answer["error"]["code"] == "multpages"  # rvlimit with one page only


# ------------------------------------------------------------------------------- text and structure

def test_headings_become_markdown_and_empty_sections_go(wiki, api, judge):
    wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, stamp(3))
    [(task, _)] = run(api, wiki, judge).tasks
    article = task.reference_article
    assert article.startswith("# Saltcote Pier Railway\n\nThe Saltcote Pier Railway is a 610 mm")
    assert "\n## History\n\n### Construction\n\nThe Saltcote Pier Company" in article
    assert "\n## See also\n\nList of pier railways in Westmarch" in article
    assert "References" not in article and "External links" not in article and "==" not in article


def test_extract_to_markdown_edge_cases():
    assert extract_to_markdown("T", "") is None
    assert extract_to_markdown("T", "\n\n== References ==\n\n== Notes ==\n") is None
    text = "Lead.\n\n\n== A ==\n\n\n=== A1 ===\nBody.\n\n\n==== Deep ====\n\n\n== B ==\nMore.\n== C =="
    assert extract_to_markdown("T", text) == "# T\n\nLead.\n\n## A\n\n### A1\n\nBody.\n\n## B\n\nMore.\n"
