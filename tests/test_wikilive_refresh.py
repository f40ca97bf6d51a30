"""Wiki Live refresh against the loopback MediaWiki emulator: discovery with continuation, the cursor,
known keys, extracts in batches, offline gold statements, and every way one article can go wrong."""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from loopback_mediawiki import (  # noqa: E402
    HARROWGATE_FERRY, MARTA_ILVES, SALTCOTE_PIER_RAILWAY, Fault, LoopbackMediaWiki, filler_article)
from loopback_web import LoopbackWeb  # noqa: E402

from dreval_assets.core.report_parser import is_checkable_fact  # noqa: E402
from dreval_assets.fetch.api import ApiError, JsonApi  # noqa: E402
from dreval_assets.fetch.live import LiveFetchConfig, LiveFetcher  # noqa: E402
from dreval_assets.fetch.safety import AllowList  # noqa: E402
from dreval_assets.judges.heuristic import HeuristicJudge, template_handlers  # noqa: E402
from dreval_assets.judges.prompts import load_template, render  # noqa: E402
from dreval_assets.live.wikilive import refresh_wikilive  # noqa: E402
from dreval_assets.live.wikilive_text import (  # noqa: E402
    GoldStatements, answer_gold_statements, extract_to_markdown, offline_gold_statements)


@pytest.fixture(scope="module")
def web():
    with LoopbackWeb() as server:  # one server for the module (shutting one down takes 0.5 s)
        yield server


@pytest.fixture
def wiki(web):
    return LoopbackMediaWiki(web)  # a fresh wiki per test: it takes over the API route


@pytest.fixture
def api(web):
    config = LiveFetchConfig(politeness_s=0.0, connect_timeout_s=2, read_timeout_s=2, total_timeout_s=5,
                             backoff_base_s=0.01, max_attempts=2)
    return JsonApi(LiveFetcher(config, allow=AllowList(frozenset({web.address}))))


@pytest.fixture
def judge(monkeypatch):
    return HeuristicJudge({**template_handlers(), "wlc/gold_statements": answer_gold_statements})


def stamp(day: int, hour: int = 12) -> str:
    return f"2025-06-{day:02d}T{hour:02d}:00:00Z"


def villages(wiki, n, first_day=1):
    return [wiki.add(f"Village {i}", filler_article(f"Village {i}", i), stamp(first_day + i)) for i in range(n)]


def titles(result):
    return sorted(t.original_id for t in result.tasks)


# ------------------------------------------------------------------------------- discovery and cursor

def test_a_first_refresh_takes_every_good_article_as_a_task(wiki, api, judge):
    pier = wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, stamp(3))
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(5))
    wiki.add("Harrowgate ferry disaster", HARROWGATE_FERRY, stamp(4))
    result = refresh_wikilive(api, wiki.api_url, None, judge)
    assert titles(result) == ["Harrowgate ferry disaster", "Marta Ilves", "Saltcote Pier Railway"]
    assert result.skipped == [] and result.pending == 0 and result.complete
    assert result.newest == stamp(5)  # the newest category addition, as MediaWiki wrote it
    task = next(t for t in result.tasks if t.original_id == "Saltcote Pier Railway")
    assert task.key == f"wlc.live-{pier.pageid}" and task.benchmark == "wlc" and task.language == "en"
    assert "Saltcote Pier Railway" in task.query and "references" in task.query and "URL" in task.query
    assert task.attributes == {"release": "live", "title": "Saltcote Pier Railway",
                               "url": "https://en.wikipedia.org/wiki/Saltcote_Pier_Railway",
                               "ga_timestamp": stamp(3), "pageid": str(pier.pageid), "revid": str(pier.revid),
                               "bytes": str(len(SALTCOTE_PIER_RAILWAY.encode()))}
    assert task.gold_facts and task.reference_article.startswith("# Saltcote Pier Railway\n\n")


def test_a_first_refresh_respects_the_limit_and_keeps_the_newest(wiki, api, judge):
    villages(wiki, 6)
    result = refresh_wikilive(api, wiki.api_url, None, judge, limit=2)
    assert titles(result) == ["Village 4", "Village 5"]
    assert result.newest == stamp(6)  # the live window starts at the top; older GAs are not live
    assert wiki.count("categorymembers") == 1


def test_a_second_refresh_returns_exactly_the_articles_added_since(wiki, api, judge):
    villages(wiki, 3)
    first = refresh_wikilive(api, wiki.api_url, None, judge)
    assert titles(first) == ["Village 0", "Village 1", "Village 2"] and first.newest == stamp(3)

    wiki.add("Marta Ilves", MARTA_ILVES, stamp(10))
    wiki.add("Harrowgate ferry disaster", HARROWGATE_FERRY, stamp(9))
    wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, stamp(3, hour=11))  # added before the cursor: old
    calls_before = wiki.count("categorymembers")
    second = refresh_wikilive(api, wiki.api_url, first.newest, judge)
    assert titles(second) == ["Harrowgate ferry disaster", "Marta Ilves"]
    assert second.newest == stamp(10) and second.complete
    assert wiki.count("categorymembers") == calls_before + 1

    extracts_before = wiki.count("extracts")
    third = refresh_wikilive(api, wiki.api_url, second.newest, judge)
    assert third.tasks == [] and third.skipped == [] and third.newest == stamp(10)
    assert wiki.count("extracts") == extracts_before  # nothing new: no text fetched


def test_continuation_walks_every_page_of_the_category_and_stops_at_the_cursor(wiki, api, judge):
    made = villages(wiki, 7)
    result = refresh_wikilive(api, wiki.api_url, None, judge, page_size=2, batch_size=3)
    assert titles(result) == [f"Village {i}" for i in range(7)]
    assert wiki.count("categorymembers") == 4  # 2 + 2 + 2 + 1
    continued = [c["cmcontinue"] for c in wiki.calls if c.get("list") == "categorymembers" and "cmcontinue" in c]
    assert len(continued) == 3 and all(c.get("continue") == "-||" for c in wiki.calls if "cmcontinue" in c)
    # TextExtracts gives one whole-article extract per call: 7 extracts, in batches of at most 3 pageids
    extract_calls = [c for c in wiki.calls if c.get("prop") == "extracts|info"]
    assert len(extract_calls) == 7
    assert {len(c["pageids"].split("|")) for c in extract_calls} == {3, 1}
    assert sum(1 for c in extract_calls if "excontinue" in c) == 4
    assert result.newest == made[-1].timestamp

    wiki.calls.clear()
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(20))
    later = refresh_wikilive(api, wiki.api_url, result.newest, judge, page_size=2)
    assert titles(later) == ["Marta Ilves"]
    assert wiki.count("categorymembers") == 1  # the first page already reaches the cursor


def test_known_keys_are_skipped_silently_and_cost_no_calls(wiki, api, judge):
    made = villages(wiki, 3)
    known = {f"wlc.live-{made[1].pageid}"}
    result = refresh_wikilive(api, wiki.api_url, None, judge, known_keys=known)
    assert titles(result) == ["Village 0", "Village 2"] and result.skipped == []
    asked = {p for c in wiki.calls if "pageids" in c for p in c["pageids"].split("|")}
    assert str(made[1].pageid) not in asked
    assert result.newest == made[2].timestamp and result.complete


def test_a_window_larger_than_the_limit_is_taken_oldest_first_without_gaps(wiki, api, judge):
    villages(wiki, 2)
    start = refresh_wikilive(api, wiki.api_url, None, judge)
    later = villages(wiki, 5, first_day=10)  # days 10..14
    registered = {t.key for t in start.tasks}
    cursor, seen = start.newest, []
    for expected_pending in (3, 1, 0):
        step = refresh_wikilive(api, wiki.api_url, cursor, judge, limit=2, known_keys=registered)
        assert step.pending == expected_pending
        seen += [t.original_id for t in step.tasks]
        registered |= {t.key for t in step.tasks}
        cursor = step.newest
    assert sorted(seen) == sorted(a.title for a in later) and len(seen) == 5
    assert cursor == later[-1].timestamp


def test_the_cursor_never_passes_an_article_that_may_still_succeed(wiki, api, judge):
    made = villages(wiki, 3)
    wiki.fail_extract(made[1].pageid, status=503, times=4)  # batch call and its single retry, 2 attempts each
    first = refresh_wikilive(api, wiki.api_url, None, judge)
    assert titles(first) == ["Village 0", "Village 2"]
    [reason] = first.skipped
    assert "Village 1" in reason and "503" in reason and "tried again next refresh" in reason
    assert first.pending == 1 and first.newest == "2025-06-02T11:59:59Z"  # one second before it

    again = refresh_wikilive(api, wiki.api_url, first.newest, judge, known_keys={t.key for t in first.tasks})
    assert titles(again) == ["Village 1"] and again.complete and again.newest == made[2].timestamp


# ------------------------------------------------------------------------------- text and structure

def test_headings_become_markdown_and_empty_sections_go(wiki, api, judge):
    wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, stamp(3))
    [task] = refresh_wikilive(api, wiki.api_url, None, judge).tasks
    article = task.reference_article
    assert article.startswith("# Saltcote Pier Railway\n\nThe Saltcote Pier Railway is a 610 mm")
    assert "\n## History\n\n### Construction\n\nThe Saltcote Pier Company" in article
    assert "\n### Twentieth century\n" in article and "\n## Rolling stock\n" in article
    assert "\n## See also\n\nList of pier railways in Westmarch" in article
    assert "References" not in article and "External links" not in article and "==" not in article
    assert "\n\nThe line is 1.2 kilometres long" in article  # each extract line is its own paragraph


def test_extract_to_markdown_edge_cases():
    assert extract_to_markdown("T", "") is None
    assert extract_to_markdown("T", "\n\n== References ==\n\n== Notes ==\n") is None
    text = "Lead.\n\n\n== A ==\n\n\n=== A1 ===\nBody.\n\n\n==== Deep ====\n\n\n== B ==\nMore.\n== C =="
    assert extract_to_markdown("T", text) == "# T\n\nLead.\n\n## A\n\n### A1\n\nBody.\n\n## B\n\nMore.\n"


# -------------------------------------------------------------------------------------- bad input

def test_bad_articles_are_skipped_with_their_reasons_and_the_rest_still_made(wiki, api, judge):
    good = wiki.add("Marta Ilves", MARTA_ILVES, stamp(1))
    wiki.add("No Extract Hall", None, stamp(2))
    wiki.add("Blank Page Bridge", "   \n", stamp(3))
    wiki.add("Headings Only Tower", "\n\n\n== History ==\n\n\n== References ==", stamp(4))
    wiki.add("Old Name Mill", "Old Name Mill may refer to Millbrook Mill.", stamp(5), redirect=True)
    wiki.add("Vanished Quay", HARROWGATE_FERRY, stamp(6), deleted=True)
    result = refresh_wikilive(api, wiki.api_url, None, judge, batch_size=50)
    assert [t.key for t in result.tasks] == [f"wlc.live-{good.pageid}"]
    reasons = {line.split("'")[1]: line for line in result.skipped}
    assert "has no extract" in reasons["No Extract Hall"]
    assert "extract is empty" in reasons["Blank Page Bridge"]
    assert "no text (empty, or headings only)" in reasons["Headings Only Tower"]
    assert "redirect" in reasons["Old Name Mill"]
    assert "missing" in reasons["Vanished Quay"]
    assert len(result.skipped) == 5 and result.complete  # all skipped for good: the cursor moves on
    assert result.newest == stamp(6)


def test_a_malformed_extracts_answer_costs_only_its_own_article(wiki, api, judge):
    made = villages(wiki, 3)
    wiki.fail_extract(made[0].pageid, status=200, body=b'{"query": {"pages": [', content_type="application/json")
    result = refresh_wikilive(api, wiki.api_url, None, judge)
    assert titles(result) == ["Village 1", "Village 2"]
    [reason] = result.skipped
    assert "Village 0" in reason and "not JSON" in reason


def test_a_mediawiki_error_object_for_one_article_is_its_reason(wiki, api, judge):
    made = villages(wiki, 2)
    error = json.dumps({"error": {"code": "internal_api_error_DBQueryError", "info": "database hiccup"}}).encode()
    wiki.fail_extract(made[1].pageid, status=200, body=error, content_type="application/json")
    result = refresh_wikilive(api, wiki.api_url, None, judge)
    assert titles(result) == ["Village 0"]
    assert "MediaWiki error internal_api_error_DBQueryError: database hiccup" in result.skipped[0]


def test_a_judge_failure_means_no_task(wiki, api, monkeypatch):
    handlers = template_handlers()
    handlers.pop("wlc/gold_statements")
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(1))
    result = refresh_wikilive(api, wiki.api_url, None, HeuristicJudge(handlers))
    assert result.tasks == []
    [reason] = result.skipped
    assert "Marta Ilves" in reason and "no gold statements" in reason and "pipeline_failure" in reason


def test_a_judge_that_finds_no_statement_means_no_task(wiki, api, monkeypatch):
    nothing = {**template_handlers(), "wlc/gold_statements": lambda v: (GoldStatements(statements=[" ", ""]), {})}
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(1))
    result = refresh_wikilive(api, wiki.api_url, None, HeuristicJudge(nothing))
    assert result.tasks == [] and "found none" in result.skipped[0]


def test_a_500_on_discovery_raises_api_error(wiki, api, judge):
    villages(wiki, 2)
    wiki.fail_discovery(status=500)
    with pytest.raises(ApiError, match="HTTP 500"):
        refresh_wikilive(api, wiki.api_url, None, judge)
    assert wiki.count("extracts") == 0


def test_a_500_on_a_later_discovery_page_raises_too(wiki, api, judge):
    villages(wiki, 4)
    wiki.faults.append(Fault(lambda params, _: "cmcontinue" in params, 502))
    with pytest.raises(ApiError, match="502"):
        refresh_wikilive(api, wiki.api_url, None, judge, page_size=2)


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
        refresh_wikilive(api, wiki.api_url, None, judge)


def test_bad_category_entries_are_reasons_not_crashes(wiki, api, judge):
    wiki.add("Marta Ilves", MARTA_ILVES, stamp(1))
    broken = {"query": {"categorymembers": [{"title": "No Id"}, "junk",
                                            {"pageid": 5, "title": "Undated", "timestamp": "yesterday"}]}}
    wiki.fail_discovery(status=200, body=json.dumps(broken).encode(), times=1)
    result = refresh_wikilive(api, wiki.api_url, None, judge)
    assert result.tasks == [] and len(result.skipped) == 3
    assert any("not ISO 8601" in s for s in result.skipped) and any("no valid pageid" in s for s in result.skipped)


def test_the_emulator_rejects_what_mediawiki_rejects(wiki, api):
    answer = api.get(wiki.api_url, {"action": "query", "prop": "extracts", "explaintext": 1,
                                    "exsectionformat": "wikitext", "pageids": "1", "format": "json",
                                    "formatversion": 2})
    assert answer["error"]["code"] == "badvalue"  # TextExtracts' section formats are plain, wiki and raw


# ------------------------------------------------------------------------------- gold statements

def test_gold_statements_are_the_article_checkable_facts(wiki, api, judge):
    wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, stamp(3))
    [task] = refresh_wikilive(api, wiki.api_url, None, judge).tasks
    facts = task.gold_facts
    assert len(facts) == 13 and len(set(facts)) == len(facts)
    assert all(is_checkable_fact(f.split(": ", 1)[-1]) for f in facts)
    assert "Construction began in March 1897 and cost £4,350." in facts
    assert "The railway operates three electric trains named Gull, Tern and Plover." in facts
    assert "Saltcote Pier Railway: It reopened on 30 April 1955 with new steel piles." in facts  # subject named
    assert not any("popular with visitors" in f for f in facts)  # no figure, no name: not checkable
    assert not any("List of pier railways" in f for f in facts)  # navigation section


def test_over_the_cap_every_section_gives_its_best_statements(wiki, api, judge):
    wiki.add("Saltcote Pier Railway", SALTCOTE_PIER_RAILWAY, stamp(3))
    [task] = refresh_wikilive(api, wiki.api_url, None, judge, max_statements=6).tasks
    assert task.gold_facts == [  # one per section in turn (best first), then the lead again; document order
        "The Saltcote Pier Railway is a 610 mm narrow-gauge railway that runs along Saltcote Pier in the county of "
        "Westmarch.",  # lead, first turn
        "The line is 1.2 kilometres long and carried 184,000 passengers in 2023.",  # lead, second turn
        "The Saltcote Pier Company commissioned the engineer Harriet Brannock to design the railway in 1896.",
        "A storm on 3 January 1953 destroyed 140 metres of the pier and closed the line for two years.",
        "The carriages were rebuilt by Harrow Engineering in 2011.",  # rolling stock
        "The railway won the Westmarch Heritage Award in 2016."]  # reception


def test_offline_gold_statements_unwrap_dedupe_and_cap():
    article = ("# Lowmarsh Lock\n\nLowmarsh Lock was built in 1791 by the\nengineer Thomas Garrow for the Harrow "
               "Navigation Company.\n\nLowmarsh Lock was built in 1791 by the engineer Thomas Garrow for the\n"
               "Harrow Navigation Company.\n\n## Use\n\n- The lock passed 3,400 boats in 1850 according to Harrow "
               "records.\n- It is nice.\n\n## References\n\nGarrow, Thomas (1792). Report to the Harrow "
               "Navigation Company. London.")
    facts = offline_gold_statements(article, "Lowmarsh Lock", 10)
    assert facts == ["Lowmarsh Lock was built in 1791 by the engineer Thomas Garrow for the Harrow Navigation "
                     "Company.", "The lock passed 3,400 boats in 1850 according to Harrow records."]
    assert len(offline_gold_statements(SALTCOTE_PIER_RAILWAY, "Saltcote Pier Railway", 3)) == 3


def test_the_prompt_renders_with_the_request_variables():
    _, version = load_template("wlc/gold_statements")
    rendered = render("wlc/gold_statements", {"title": "Marta Ilves", "max_statements": 40, "article": "ARTICLE BODY"})
    assert "Marta Ilves" in rendered and "at most 40 statements" in rendered and "ARTICLE BODY" in rendered
    assert version and "{" not in rendered
