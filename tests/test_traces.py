"""The research-trace parser on each shape releases and agents write (core/traces.py): kinds, queries,
URLs, dependencies; an unreadable trace is a warning, never an exception."""
import json
from pathlib import Path

import polars as pl

from dreval_assets.core.traces import classify, normalise_url, parse_trace
from dreval_assets.stages.frames import frame
from dreval_assets.stages.traces import trace_step_rows

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo" / "systems"


def kinds(parsed):
    return [s.kind for s in parsed.steps]


def test_openai_message_list_with_tool_calls():
    trace = json.dumps([
        {"role": "system", "content": "You are a researcher."},
        {"role": "user", "content": "How much water do the plants supply?"},
        {"role": "assistant", "content": "Plan: find the annual report, then check it.",
         "tool_calls": [{"id": "a", "type": "function",
                         "function": {"name": "web_search", "arguments": json.dumps({"query": "plant output 2023"})}}]},
        {"role": "tool", "tool_call_id": "a", "content": "1. Annual report https://water.example/report"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "b", "function": {"name": "fetch_url", "arguments": {"url": "https://www.water.example/report/"}}}]},
        {"role": "tool", "tool_call_id": "b", "content": "The plants supplied 171 million cubic metres."},
        {"role": "assistant", "content": "Cross-check the 171 million against the 2019 figure."},
        {"role": "assistant", "content": "Write the report with every figure cited."},
    ])
    parsed = parse_trace(trace)
    assert parsed.shape == "messages" and not parsed.warnings
    assert kinds(parsed) == ["plan", "search", "read", "verify", "synthesize"]
    search, read = parsed.steps[1], parsed.steps[2]
    assert search.queries == ["plant output 2023"] and search.urls == []  # result links are not pages read
    assert read.urls == ["https://www.water.example/report/"] and "171 million" in read.text  # result joins its call
    assert read.depends_on == [2] and parsed.steps[3].depends_on == [3] and parsed.steps[4].depends_on == [4]


def test_think_blocks_with_tags():
    trace = ("<think>First I will look for the capacity, then the price.</think>\n"
             "[web_search] Sarrano desalination capacity\n"
             "[scrape] https://water.example/a\n"
             "<think>The page says 540,000 cubic metres per day.</think>\n"
             "[analyze_image] {\"url\": \"https://water.example/chart.png\", \"question\": \"energy\"}\n"
             "[web_search] Sarrano desalination capacity\n")
    parsed = parse_trace(trace)
    assert parsed.shape == "tagged"
    assert kinds(parsed) == ["plan", "search", "read", "analyze", "analyze", "search"]
    assert parsed.steps[1].queries == ["Sarrano desalination capacity"]
    assert parsed.steps[2].urls == ["https://water.example/a"] and parsed.steps[2].depends_on == [2]
    assert parsed.steps[3].text.startswith("The page says")  # reasoning reads nothing itself: analyze
    assert parsed.steps[4].urls == ["https://water.example/chart.png"] and parsed.steps[4].depends_on == [4]
    assert parsed.steps[3].depends_on == [3]


def test_step_n_text():
    parsed = parse_trace("[Step 1] Plan the briefing.\n[Step 2] Search for \"water price Sarrano\".\n"
                         "[Step 3] Read https://b.example/p and note 3 plants.\n**Step 4:** Write a short summary.")
    assert parsed.shape == "numbered" and not parsed.warnings
    assert kinds(parsed) == ["plan", "search", "read", "synthesize"]
    assert parsed.steps[1].queries == ["water price Sarrano"] and parsed.steps[2].urls == ["https://b.example/p"]
    assert parsed.steps[3].depends_on == [3]


def test_json_step_array_and_wrapped_steps():
    steps = [{"type": "search", "query": "abc"}, {"action": "browse", "url": "https://c.example"},
             {"type": "thought", "content": "It says 40%."}, {"type": "reflection", "content": "Recheck the 40%."},
             "Write the final answer."]
    for trace in (json.dumps(steps), json.dumps({"steps": steps})):
        parsed = parse_trace(trace)
        assert parsed.shape == "json_steps"
        assert kinds(parsed) == ["search", "read", "analyze", "verify", "synthesize"]
        assert parsed.steps[0].queries == ["abc"] and parsed.steps[1].urls == ["https://c.example"]
        assert parsed.steps[2].depends_on == [2] and parsed.steps[4].depends_on == [3, 4]


def test_prose_is_read_by_paragraph_with_a_warning():
    parsed = parse_trace("I searched the web for plant capacity.\n\nThen I read the authority's annual report.\n\n"
                         "Finally I wrote the report.")
    assert parsed.shape == "prose" and "prose" in parsed.warnings[0]
    assert kinds(parsed) == ["search", "read", "synthesize"]


def test_empty_and_unreadable_traces_are_warnings_not_crashes():
    for empty in (None, "", "  \n", "[]", "{\"messages\": []}"):
        assert parse_trace(empty).steps == [] and parse_trace(empty).shape == "empty"
    broken = parse_trace("[{\"role\": \"assistant\", \"content\": ")
    assert broken.steps == [] and broken.shape == "unreadable" and "is not" in broken.warnings[0]
    cut = parse_trace(json.dumps([{"role": "assistant", "content": "Search for \"a b\"."},
                                  {"role": "assistant", "content": "Read https://x.example/p"}])[:-30])
    assert len(cut.steps) == 1 and "first 1 whole elements" in cut.warnings[0]
    odd = parse_trace(json.dumps({"foo": 1}))
    assert "unknown shape" in odd.warnings[0]
    weird = parse_trace(json.dumps([1, 2, 3]))  # not steps: read as text
    assert weird.warnings


def test_classify_and_urls():
    assert classify("Verify the figures against a second source") == "verify"
    assert classify("Write the report: every figure cited to the page") == "synthesize"  # earliest key word wins
    assert classify("Read the page and summarise it") == "read"
    assert classify("I searched for plant capacity", first=True) == "search"  # "plant" is no plan
    assert normalise_url("https://www.A.example/x/#top") == normalise_url("http://a.example/x")


def test_demo_traces_three_shapes():
    shapes = {s: parse_trace((DEMO / s / "37.trace.json").read_text()).shape
              for s in ("careful-scholar", "loose-cannon", "quiet-summarizer")}
    assert shapes == {"careful-scholar": "messages", "loose-cannon": "tagged", "quiet-summarizer": "numbered"}


def test_trace_steps_rows():
    reports = frame("reports", [
        {"system": "s", "task": "t1", "status": "ok", "text": "r", "n_chars": 1, "content_hash": "h", "source_path": "",
         "na_reason": None, "detail": "", "trace": "[Step 1] Plan.\n[Step 2] Search for \"x\"."},
        {"system": "s", "task": "t2", "status": "ok", "text": "r", "n_chars": 1, "content_hash": "h", "source_path": "",
         "na_reason": None, "detail": ""},  # no trace: no rows
        {"system": "s", "task": "t3", "status": "ok", "text": "r", "n_chars": 1, "content_hash": "h", "source_path": "",
         "na_reason": None, "detail": "", "trace": "   "}])
    rows, counts = trace_step_rows(reports)
    assert counts == {"traces": 2, "steps": 2, "with_warnings": 0, "no_steps": 1}
    assert rows.select("task", "step", "kind", "queries", "depends_on").rows() == [
        ("t1", 1, "plan", [], []), ("t1", 2, "search", ["x"], [1])]
    assert rows.schema["urls"] == pl.List(pl.String)


def test_folder_traces_reach_the_reports_and_trace_steps_tables(tmp_path):
    from dreval_assets.stages.reports import read_reports
    from dreval_assets.store.db import Store
    from dreval_assets.store.registry import SystemEntry

    systems = {s: SystemEntry(s, s, "folder", str(DEMO / s)) for s in ("careful-scholar", "loose-cannon",
                                                                       "quiet-summarizer")}
    keys = [(s, "miroeval.37") for s in systems] + [("careful-scholar", "drb.drb-52")]
    reports = read_reports(keys, systems, {"miroeval.37": "37", "drb.drb-52": "drb-52"})
    traces = dict(zip(reports["system"] + "/" + reports["task"], reports["trace"]))
    assert traces["careful-scholar/drb.drb-52"] is None  # no trace file beside that report
    assert traces["loose-cannon/miroeval.37"].startswith("<think>")
    steps, counts = trace_step_rows(reports)
    store = Store(tmp_path / "d.duckdb")
    store.ensure_schema()
    store.replace_partitions("reports", keys, {"reports": reports}, "run")
    store.replace_partitions("trace_steps", keys, {"trace_steps": steps}, "run")
    assert store.query("SELECT count(*) FROM reports WHERE trace IS NOT NULL").item() == 3
    by_kind = dict(store.query("SELECT kind, count(*) FROM trace_steps WHERE system = 'careful-scholar' "
                               "GROUP BY kind").iter_rows())
    assert by_kind == {"plan": 1, "search": 4, "read": 4, "analyze": 2, "verify": 2, "synthesize": 1}
    repeated = store.query("SELECT system, count(*) - count(DISTINCT q) FROM trace_steps, unnest(queries) AS u(q) "
                           "GROUP BY system ORDER BY system").rows()
    assert repeated == [("careful-scholar", 0), ("loose-cannon", 2), ("quiet-summarizer", 0)]
    assert counts["traces"] == 3 and counts["no_steps"] == 0
