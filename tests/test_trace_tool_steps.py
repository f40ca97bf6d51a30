"""Tool calls of any name are steps of their own, in their place (issue 28, MiroEval "Trace steps in
order"): tagged text as MiroThinker writes it, XML tool calls, message lists and JSON step arrays.
Fixtures (fixtures/traces/) are in the published vendor shapes with the ugly cases: a trace cut inside
its first thought, an unclosed last thought, code with a blank line, a cut JSON result, CJK text."""
import json
from pathlib import Path

from dreval_assets.core.trace_tags import looks_tagged, tagged_pieces
from dreval_assets.core.traces import KINDS, parse_trace

TRACES = Path(__file__).resolve().parent / "fixtures" / "traces"
MARKERS = {"<think>", "</think>"}


def kinds(parsed):
    return [s.kind for s in parsed.steps]


def test_mirothinker_tool_tags_are_steps_in_their_place():
    parsed = parse_trace((TRACES / "mirothinker_tools.txt").read_text(encoding="utf-8"))
    assert parsed.shape == "tagged" and not parsed.warnings
    assert kinds(parsed) == ["plan", "tool", "analyze", "read", "analyze", "analyze", "analyze", "search", "read",
                             "analyze", "analyze", "search", "verify"]
    steps = parsed.steps
    assert steps[1].text == "[create_sandbox]"  # a call with no arguments is still a step
    assert steps[3].urls == ["https://water.example/reports/annual-2023.pdf"]
    # the code after the blank line stays with its call, between the two thoughts around it
    assert steps[5].text.startswith("[run_python_code] import pypdf")
    assert "for page in reader.pages[3:5]:\n    print(" in steps[5].text
    assert steps[4].text.startswith("Open it with Python") and steps[6].text.startswith("Page 4 lists")
    assert steps[7].queries == ["unit cost per cubic metre"]
    assert "0.84 dollars" in steps[8].text and steps[8].urls == []  # a document name is not a page address
    assert "Punta Velas 220 千立方米/日" in steps[10].text  # a JSON result cut mid-string keeps its text
    assert steps[11].queries == ['"Sarrano desalination" 2023 capacity']  # inner quotes are part of the query
    assert steps[12].text.startswith("[Note] this bracket line")  # not a tool name: the thought's own text
    assert steps[12].urls == ["https://water.example/reports/annual-2019.pdf"]
    assert steps[0].text.startswith("The user attached")  # before a stray </think>: the cut first thought


def test_no_line_of_a_tagged_trace_is_lost_or_moved():
    text = (TRACES / "mirothinker_tools.txt").read_text(encoding="utf-8")
    steps = parse_trace(text).steps
    where = []
    for line in (x.strip() for x in text.splitlines()):
        if not line or line in MARKERS:
            continue
        holders = [s.index for s in steps if line in s.text]
        assert holders, f"line lost: {line!r}"
        where.append(holders[0])
    assert where == sorted(where)  # every line in a step at or after the previous line's step


def test_crlf_trace_gives_the_same_steps():
    text = (TRACES / "mirothinker_tools.txt").read_text(encoding="utf-8")
    unix, windows = parse_trace(text), parse_trace(text.replace("\n", "\r\n"))
    assert kinds(windows) == kinds(unix)
    assert [s.queries for s in windows.steps] == [s.queries for s in unix.steps]
    assert [s.urls for s in windows.steps] == [s.urls for s in unix.steps]


def test_xml_tool_calls_in_place_and_a_cut_call_keeps_its_name():
    parsed = parse_trace((TRACES / "xml_tool_calls.txt").read_text(encoding="utf-8"))
    assert parsed.shape == "tagged"
    assert kinds(parsed) == ["plan", "analyze", "analyze", "search", "tool", "read"]
    code, note, search, sandbox, download = parsed.steps[1:]
    assert code.text == '[run_python_code] {"code": "print(220 + 180 + 90 + 50)"}'
    assert note.text == "The sum is 540 thousand cubic metres per day."
    assert search.text.startswith("[google_search]") and search.queries == ["Sarrano desalination plants 2023"]
    assert sandbox.text == "[create_sandbox] {}"
    assert download.text.startswith("[download_file]") and download.urls == ["https://water.example/a.pdf"]


def test_without_think_blocks_a_tag_takes_its_paragraph_only():
    parsed = parse_trace("[web_search] ferry ridership 2023\n{\"organic\": [{\"link\": \"https://x.example\"}]}\n\n"
                         "The council figures look best.\n[create_sandbox]\n[tally_votes] {\"year\": 2023}")
    assert kinds(parsed) == ["search", "analyze", "tool", "tool"]
    assert parsed.steps[0].queries == ["ferry ridership 2023"] and parsed.steps[0].urls == []  # results: unopened
    assert '"organic"' in parsed.steps[0].text and parsed.steps[1].text == "The council figures look best."
    assert parsed.steps[3].text == '[tally_votes] {"year": 2023}' and "tool" in KINDS


def test_brackets_that_are_not_tool_calls_leave_the_shape_alone():
    numbered = parse_trace("[Step 1] Plan the briefing.\n[Step 2] Read [the report](https://b.example/p).\n"
                           "[1] Notes.")
    assert numbered.shape == "numbered" and kinds(numbered) == ["plan", "read"]
    prose = parse_trace("[The annual report](https://b.example/p) says 40%.\n\n[Note] Write the summary.")
    assert prose.shape == "prose" and len(prose.steps) == 2
    assert not looks_tagged("[x] done\n[The report](https://b.example)\n[Step 3] go")


def test_message_list_with_tagged_content_and_unknown_tools():
    trace = json.dumps([
        {"role": "user", "content": "Plants?"},
        {"role": "assistant", "content": "<think>Fetch the brief first.</think>\n"
                                         "[download_file] https://w.example/b.pdf\n<think>Then run the numbers.</think>",
         "tool_calls": [{"id": "c1", "function": {"name": "create_sandbox", "arguments": "{}"}},
                        {"id": "c2", "function": {"name": "run_python_code",
                                                  "arguments": json.dumps({"code": "print(540/4)"})}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "135.0"},
        {"role": "assistant", "content": "Write the report."}])
    parsed = parse_trace(trace)
    assert parsed.shape == "messages"
    assert kinds(parsed) == ["plan", "read", "analyze", "tool", "analyze", "synthesize"]
    assert parsed.steps[1].urls == ["https://w.example/b.pdf"] and parsed.steps[4].text.endswith("-> 135.0")


def test_json_steps_name_their_tools():
    steps = [{"type": "thought", "content": "Get the operator's data."}, {"tool": "create_sandbox"},
             {"type": "tool_call", "name": "download_file", "arguments": {"url": "https://w.example/d.xlsx"}},
             {"tool": "search_document", "input": {"query": "unit cost"}}, {"tool": "mystery_widget", "output": "ok"},
             {"type": "note", "content": "Write the final answer."}]
    parsed = parse_trace(json.dumps(steps))
    assert kinds(parsed) == ["analyze", "tool", "read", "search", "tool", "synthesize"]
    assert parsed.steps[2].urls == ["https://w.example/d.xlsx"] and parsed.steps[3].queries == ["unit cost"]
    assert parsed.steps[4].text == "mystery_widget: ok"


def test_pieces_keep_every_character_but_the_markers():
    text = ("</think>\n[scrape] https://a.example\nbody line\n<think>why</think>\n"
            "<tool_call>{\"name\": \"x\"}</tool_call>")
    pieces = tagged_pieces(text)
    assert [(p.role, p.tool, p.body) for p in pieces] == [
        ("tool", "scrape", "https://a.example\nbody line"), ("think", "", "why"), ("tool", "x", "{}")]
