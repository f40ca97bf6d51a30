"""Statements as the benchmarks extract them: the parser's units go to a real OpenAI-compatible judge
(our loopback server and its stand-in model) in chunks; only statements the report grounds are kept,
always with their unit's citations."""
import re
import time
import sys
from pathlib import Path

import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from judge_answers import PROBE, PROBE_STATEMENT, dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402

from dreval_assets.core.statements import (Unit, chunk_units, claim_order, grounding_problem,  # noqa: E402
                                           statement_text)
from dreval_assets.judges.openai_config import OpenAIJudgeConfig  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402
from dreval_assets.stages.parse import parse_reports  # noqa: E402
from dreval_assets.stages.statements import TEMPLATE, extract_statements  # noqa: E402

REFS = """
## References
[1] Ferry statistics 2023. https://ferries.example/lowmarsh-2023
[2] Estuary Links annual report. https://estuary.example/annual
"""
REPORT = """# The Lowmarsh ferry

## Traffic
The Lowmarsh ferry carried 41,200 passengers in 2023 [1]; freight volumes reached 9,300 tonnes [2].
It was operated by Estuary Links, which added a third vessel named Curlew in March 2023 [2].
Average crossing time fell to 14 minutes after the Saltcote pier opened [1].
In this section we look at what the numbers mean for the town [1].
Passenger numbers have risen by 12 percent since 2021.
""" + REFS


def parsed_claims(reports: dict[tuple[str, str], str]) -> pl.DataFrame:
    rows = [{"system": s, "task": t, "status": "ok", "text": text, "detail": ""} for (s, t), text in reports.items()]
    return parse_reports(pl.DataFrame(rows))["report_claims"]


def make_judge(server, calls, **overrides) -> OpenAIJudge:
    settings = dict(model="loopback-model", base_url=server.base_url, api_key="sk-test", timeout_s=5,
                    backoff_base_s=0.01, max_attempts=2, validation_retries=1)
    settings.update(overrides)
    return OpenAIJudge(OpenAIJudgeConfig(**settings), calls)


def prompt_of(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if "<<<UNITS" in str(m.get("content")))


def asked_units(request: dict) -> list[str]:
    listing = prompt_of(request).split("<<<UNITS\n", 1)[1].split("\nUNITS>>>", 1)[0]
    return re.findall(r"^\[([^\]]+)\]", listing, re.M)


def by_id(frame: pl.DataFrame) -> dict[str, dict]:
    return {row["claim_id"]: row for row in frame.iter_rows(named=True)}


class AnswerWith:
    """The stand-in model's answer plus the statements `add(units)` gives (units: id -> text)."""

    def __init__(self, add):
        self.add = add

    def __call__(self, request, schema):
        answer = dreval_answer(request, schema)
        if "<<<UNITS" in str(request.get("messages")):
            listing = prompt_of(request).split("<<<UNITS\n", 1)[1].split("\nUNITS>>>", 1)[0]
            units = dict(re.findall(r"^\[([^\]]+)\] (.*)$", listing, re.M))
            answer["statements"] += self.add(units)
        return answer


class Streaming:
    """The real judge, handing its judgments back one at a time (`judge_each`), each counted in `yielded`."""

    streams_requests = True

    def __init__(self, real, yielded):
        self.real, self.yielded = real, yielded

    def __getattr__(self, name):
        return getattr(self.real, name)

    def judge_each(self, requests):
        for judgment in self.real.judge_each(requests):
            self.yielded.append(judgment)
            yield judgment


def test_a_report_is_one_request_and_statements_take_their_units_citations(llm, calls):
    claims = parsed_claims({("sys-a", "wlc.lowmarsh"): REPORT})
    judge = make_judge(llm, calls)
    statements, summary = extract_statements(claims, judge, labels={"asset": "parsed_reports"})
    assert llm.n_calls == 1
    units = by_id(claims)
    rows = by_id(statements)
    # the first sentence states two facts: two statements, each with the citations of the whole sentence
    assert rows["c0001.s1"]["text"] == "The Lowmarsh ferry carried 41,200 passengers in 2023."
    assert rows["c0001.s2"]["text"] == "Freight volumes reached 9,300 tonnes."
    for row in statements.iter_rows(named=True):
        unit = units[row["source_claim"]]
        assert row["extraction"] == "llm" and row["claim_id"].startswith(unit["claim_id"] + ".s")
        for column in ("kind", "section", "citation_indices", "urls", "unresolved_indices"):
            assert row[column] == unit[column]
    assert units["c0001"]["citation_indices"] == [1, 2]
    # "It" resolved to the subject of the unit before; the chatter sentence gave no statement
    assert rows["c0002.s1"]["text"].startswith("The Lowmarsh ferry was operated by Estuary Links")
    assert not any(row["source_claim"] == "c0004" for row in statements.iter_rows(named=True))
    assert rows["c0005.s1"]["kind"] == "uncited" and rows["c0005.s1"]["urls"] == []
    [report] = summary.to_dicts()
    assert report | {"detail": ""} == {
        "system": "sys-a", "task": "wlc.lowmarsh", "n_units": 5, "n_statements": 5, "n_ungrounded": 0,
        "n_duplicates": 0, "n_empty": 0, "n_chunks": 1, "n_failed_chunks": 0, "na_reason": None, "detail": "",
        "calls": 1, "tokens_in": report["tokens_in"], "tokens_out": report["tokens_out"]}
    assert report["detail"] == "1 units gave no statement" and report["tokens_in"] > 0
    ledger = calls.store.query("SELECT template, system, task, asset FROM judge_ledger").rows()
    assert ledger == [(TEMPLATE, "sys-a", "wlc.lowmarsh", "parsed_reports")]


def test_a_long_report_is_cut_into_chunks_and_every_unit_is_asked_once(llm, calls):
    sentences = [f"Pier {n} of the Lowmarsh harbour handled {100 + n} ferry departures in 2023 [1]." for n in range(60)]
    long_report = "# Harbour\n\n## Piers\n" + "\n".join(sentences) + "\n" + REFS
    claims = parsed_claims({("sys-a", "wlc.lowmarsh"): long_report, ("sys-b", "wlc.lowmarsh"): REPORT})
    judge = make_judge(llm, calls)
    batches = []
    judge_each = judge.judge_each

    def counted(requests):
        requests = list(requests)  # a streaming judge is handed an iterator
        batches.append(len(requests))
        return judge_each(requests)

    judge.judge_each = counted
    statements, summary = extract_statements(claims, judge, chunk_chars=1000)
    long_units = claims.filter(pl.col("system") == "sys-a")["claim_id"].to_list()
    expected_chunks = len(chunk_units([Unit(c, "sentence", t, "") for c, t in
                                       claims.filter(pl.col("system") == "sys-a").select("claim_id", "text").rows()],
                                      1000))
    assert expected_chunks >= 4
    assert batches == [expected_chunks + 1]  # every chunk of both reports in one call
    asked = [unit for request in llm.requests for unit in asked_units(request)]
    assert sorted(asked) == sorted(long_units + claims.filter(pl.col("system") == "sys-b")["claim_id"].to_list())
    assert len(asked) == len(set(asked)) + 5  # the two reports share ids c0001..c0005, each asked once per report
    long_requests = [r for r in llm.requests if "Pier " in prompt_of(r)]
    assert len(long_requests) == expected_chunks
    for request in long_requests:  # a later chunk shows the unit before it, to resolve pronouns
        first = int(asked_units(request)[0][1:])
        assert ("<<<BEFORE" in prompt_of(request)) == (first > 1)
        if first > 1:
            assert f"Pier {first - 2} of" in prompt_of(request).split("<<<BEFORE", 1)[1].split("BEFORE>>>")[0]
    report = summary.filter(pl.col("system") == "sys-a").to_dicts()[0]
    assert report["n_chunks"] == expected_chunks and report["n_units"] == report["n_statements"] == 60
    assert statements.filter(pl.col("system") == "sys-a")["source_claim"].to_list() == long_units  # report order


def test_ungrounded_statements_are_dropped_and_counted(calls):
    report = REPORT.replace("Average crossing time", f"{PROBE} Average crossing time")

    def extra(units):
        return [{"unit": "c0042", "text": "The Lowmarsh ferry carried 41,200 passengers in 2023."},  # not in the chunk
                {"unit": "c0001", "text": "The Lowmarsh ferry carried 52,000 passengers in 2023."},  # figure not in it
                {"unit": "c0002", "text": "Estuary Links was founded in Rotterdam by Dutch shipbuilders."},  # words
                {"unit": "c0005", "text": "Passenger numbers have risen by 12 percent since 2021."},  # a repeat
                {"unit": "c0005", "text": "[1] https://ferries.example/lowmarsh-2023"}]  # nothing left

    with LoopbackLLM(answer=AnswerWith(extra)) as server:
        claims = parsed_claims({("sys-a", "wlc.lowmarsh"): report})
        statements, summary = extract_statements(claims, make_judge(server, calls))
    texts = statements["text"].to_list()
    assert PROBE_STATEMENT not in texts and "The Lowmarsh ferry carried 52,000 passengers in 2023." not in texts
    assert not any("Rotterdam" in text for text in texts)
    assert texts.count("Passenger numbers have risen by 12 percent since 2021.") == 1
    assert "The Lowmarsh ferry carried 41,200 passengers in 2023." in texts  # c0001's own, kept once
    [row] = summary.to_dicts()
    assert (row["n_ungrounded"], row["n_duplicates"], row["n_empty"]) == (4, 1, 1)
    assert "4 ungrounded statements dropped, e.g. 'The Quorvane Institute" in row["detail"]
    assert "1 repeated and 1 empty statements dropped" in row["detail"]
    assert row["na_reason"] is None and row["n_statements"] == len(texts)


def test_a_statement_naming_a_unit_of_another_chunk_is_dropped(calls):
    sentences = [f"Pier {n} of the Lowmarsh harbour handled {100 + n} ferry departures in 2023 [1]." for n in range(12)]
    report = "# Harbour\n\n## Piers\n" + "\n".join(sentences) + "\n" + REFS

    def borrow(units):  # the second chunk's answer claims a statement for c0001, of the first chunk
        return [{"unit": "c0001", "text": sentences[0][:-5] + "."}] if "c0001" not in units else []

    with LoopbackLLM(answer=AnswerWith(borrow)) as server:
        claims = parsed_claims({("sys-a", "wlc.lowmarsh"): report})
        statements, summary = extract_statements(claims, make_judge(server, calls), chunk_chars=420)
    assert summary["n_chunks"].to_list() == [2] and summary["n_ungrounded"].to_list() == [1]
    assert statements.filter(pl.col("source_claim") == "c0001")["claim_id"].to_list() == ["c0001.s1"]
    assert "names unit 'c0001', not one of its chunk's" in summary["detail"][0]


def test_citations_never_come_from_the_model(calls):
    def with_markers(units):
        return [{"unit": "c0003", "text": "Average crossing time fell to 14 minutes [7] (https://other.example/x)."},
                {"unit": "[c0005]", "text": "Passenger numbers rose by 12 percent since 2021 [2]."}]

    with LoopbackLLM(answer=AnswerWith(with_markers)) as server:
        claims = parsed_claims({("sys-a", "wlc.lowmarsh"): REPORT})
        statements, _ = extract_statements(claims, make_judge(server, calls))
    rows = by_id(statements)
    assert rows["c0003.s2"]["text"] == "Average crossing time fell to 14 minutes."
    assert rows["c0003.s2"]["citation_indices"] == [1]
    assert rows["c0003.s2"]["urls"] == ["https://ferries.example/lowmarsh-2023"]
    assert rows["c0005.s2"]["text"] == "Passenger numbers rose by 12 percent since 2021."
    assert rows["c0005.s2"]["citation_indices"] == [] and rows["c0005.s2"]["kind"] == "uncited"
    assert not any("[" in text or "http" in text for text in statements["text"])


def test_a_failed_chunk_keeps_its_sentences_and_says_provider_failure(calls):
    failing = "Pier 7 of"

    def answer(request, schema):
        if failing in str(request.get("messages")):
            raise RuntimeError("the model is down")  # the loopback server answers 500
        return dreval_answer(request, schema)

    sentences = [f"Pier {n} of the Lowmarsh harbour handled {100 + n} ferry departures in 2023 [1]." for n in range(12)]
    report = "# Harbour\n\n## Piers\n" + "\n".join(sentences) + "\n" + REFS
    with LoopbackLLM(answer=answer) as server:
        claims = parsed_claims({("sys-a", "wlc.lowmarsh"): report})
        statements, summary = extract_statements(claims, make_judge(server, calls), chunk_chars=420)
        assert server.n_calls == 1 + 2  # the healthy chunk once, the failing one twice (max_attempts)
    kept = statements.filter(pl.col("extraction") == "sentences")
    assert kept["claim_id"].to_list() == kept["source_claim"].to_list() == [f"c{n:04d}" for n in range(7, 13)]
    assert kept["text"].to_list() == claims["text"].to_list()[6:]
    extracted = statements.filter(pl.col("extraction") == "llm")
    assert extracted["source_claim"].to_list() == [f"c{n:04d}" for n in range(1, 7)]
    [row] = summary.to_dicts()
    assert row["na_reason"] == "provider_failure" and row["n_failed_chunks"] == 1 and row["n_chunks"] == 2
    assert row["detail"].startswith("1 of 2 chunks failed (provider_failure: ")
    assert "their 6 sentences kept" in row["detail"]


def test_a_second_run_sends_no_request(llm, calls):
    other = REPORT.replace("Lowmarsh", "Highmarsh")  # the same text would share its cached answers
    claims = parsed_claims({("sys-a", "wlc.lowmarsh"): REPORT, ("sys-b", "wlc.lowmarsh"): other})
    first, first_summary = extract_statements(claims, make_judge(llm, calls), chunk_chars=200)
    sent = llm.n_calls
    again, again_summary = extract_statements(claims.reverse(), make_judge(llm, calls), chunk_chars=200)
    assert sent > 2 and llm.n_calls == sent
    assert again.equals(first)
    assert again_summary["calls"].to_list() == [0, 0] and again_summary["tokens_in"].to_list() == [0, 0]
    assert again_summary.drop("calls", "tokens_in", "tokens_out").equals(
        first_summary.drop("calls", "tokens_in", "tokens_out"))


ZH_REPORT = """# 宁德时代2023年经营情况

## 业绩
宁德时代2023年营业收入达到４００９亿元[1]；归属于上市公司股东的净利润为４４１亿元[1]。
该公司动力电池全球市场占有率连续七年位居第一[2]。

## References
[1] 宁德时代2023年年度报告 https://www.catl.example.cn/2023-annual
[2] 动力电池装车量统计 https://www.battery.example.cn/2023
"""


def test_chinese_units(calls):
    def extra(units):
        return [{"unit": "c0001", "text": "宁德时代2023年净利润为441亿元。"},  # half-width digits of the unit
                {"unit": "c0001", "text": "宁德时代2023年净利润为500亿元。"},  # a figure the unit lacks
                {"unit": "c0002", "text": "比亚迪海外销量增长了三倍并超过特斯拉。"}]  # words the report lacks

    with LoopbackLLM(answer=AnswerWith(extra)) as server:
        claims = parsed_claims({("sys-a", "drb.catl"): ZH_REPORT})
        statements, summary = extract_statements(claims, make_judge(server, calls))
    texts = by_id(statements)
    assert texts["c0001.s1"]["text"] == "宁德时代2023年营业收入达到４００９亿元。"  # the unit split at "；"
    assert texts["c0001.s2"]["text"] == "归属于上市公司股东的净利润为４４１亿元。"
    assert texts["c0001.s3"]["text"] == "宁德时代2023年净利润为441亿元。"
    assert texts["c0001.s3"]["urls"] == ["https://www.catl.example.cn/2023-annual"]
    assert texts["c0002.s1"]["citation_indices"] == [2]
    assert len(statements) == 4
    assert summary["n_ungrounded"].to_list() == [2]


def test_reports_without_claims_get_a_zero_row_and_no_request(llm, calls):
    empty = parsed_claims({})
    statements, summary = extract_statements(empty, make_judge(llm, calls), partitions=[("sys-a", "wlc.lowmarsh")])
    assert llm.n_calls == 0 and statements.is_empty() and "source_claim" in statements.columns
    assert summary.to_dicts()[0] | {"detail": ""} == {
        "system": "sys-a", "task": "wlc.lowmarsh", "n_units": 0, "n_statements": 0, "n_ungrounded": 0,
        "n_duplicates": 0, "n_empty": 0, "n_chunks": 0, "n_failed_chunks": 0, "na_reason": None,
        "detail": "", "calls": 0, "tokens_in": 0, "tokens_out": 0}


# -- the pure rules


def test_chunks_hold_consecutive_units_within_the_budget_and_a_long_unit_alone():
    units = [Unit(f"c{n}", "sentence", "x" * size, "") for n, size in enumerate([40, 50, 20, 200, 10, 10], 1)]
    assert [[u.claim_id for u in chunk] for chunk in chunk_units(units, 100)] == [
        ["c1", "c2"], ["c3"], ["c4"], ["c5", "c6"]]
    assert sorted(["c10000", "c9999", "c0002.s10", "c0002.s9"], key=claim_order) == [
        "c0002.s9", "c0002.s10", "c9999", "c10000"]


@pytest.mark.parametrize("statement, grounded", [
    ("Kestrel Ridge stores 3,400 megawatt-hours.", True),  # subject from the section title
    ("Solvane Energy's battery stores 3400 MWh.", True),  # subject from the unit before; separators
    ("Kestrel Ridge stores about 3.4 thousand megawatt-hours.", True),  # rounded
    ("Kestrel Ridge stores 3,412 megawatt-hours.", False),  # a figure the unit lacks
    ("Kestrel Ridge stores 3,400 megawatt-hours since 9 May 2024.", False),  # a day the unit lacks
    ("Its 850 megawatts make it the largest battery in Europe by far.", False),  # 850 is not in this unit
    ("Kestrel Ridge was financed by the regional pension fund of Norland.", False),  # words not in the text
])
def test_grounding(statement, grounded):
    unit = Unit("c0002", "sentence", "It stores 3,400 megawatt-hours, enough for four hours, since May 2024.",
                "Kestrel Ridge")
    before = Unit("c0001", "sentence", "Solvane Energy's battery is the largest in the interconnection.",
                  "Kestrel Ridge")
    assert (grounding_problem(statement, unit, before) == "") is grounded


def test_statement_text_keeps_words_only():
    assert statement_text("Sales rose 5% [3] in 2023 (see https://x.example/a).") == "Sales rose 5% in 2023."
    assert statement_text("营收４００９亿元【2】（来源：https://a.example.cn/b）。") == "营收４００９亿元。"
    assert statement_text("The [2023] figure (in euros) held.") == "The [2023] figure (in euros) held."



def test_a_streaming_judge_is_asked_for_the_first_reports_while_later_ones_are_parsed(llm, calls, monkeypatch):
    from dreval_assets.core import report_parser
    from dreval_assets.stages.parse import parse_with_statements, with_statements

    reports = pl.DataFrame([{"system": f"s{i:02d}", "task": "t", "status": "ok", "detail": "",
                             "text": REPORT.replace("41,200", f"{41_200 + i:,}")} for i in range(40)])
    last = "41,239"
    parse = report_parser.parse_report
    asked_before_the_last: list[int] = []

    def parse_slowly_at_the_end(text):
        if last in text:  # the last report: parsed only once the judge has had earlier reports' chunks
            deadline = time.monotonic() + 5
            while llm.n_calls == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            asked_before_the_last.append(llm.n_calls)
        return parse(text)

    monkeypatch.setattr(report_parser, "parse_report", parse_slowly_at_the_end)
    judge = make_judge(llm, calls, concurrency=4)
    streamed = parse_with_statements(reports, judge, {("s39", "t")}, {"asset": "parsed_reports"}, [])
    assert asked_before_the_last and asked_before_the_last[0] > 0
    assert llm.n_calls == 39  # one chunk per report, but for the one whose statements a release ships

    monkeypatch.setattr(report_parser, "parse_report", parse)
    frames = parse_reports(reports)  # all parsed first, then asked (the answers now from the cache)
    claims = frames["report_claims"].filter(pl.col("system") != "s39")
    at_once = with_statements(frames["parsed_reports"], *extract_statements(claims, judge, {"asset": "parsed_reports"}))
    assert llm.n_calls == 39
    for name in ("parsed_reports", "report_claims"):
        assert streamed[name].to_dicts() == at_once[name].to_dicts()  # same rows, same order
    kept = streamed["parsed_reports"].filter(pl.col("system") == "s39").row(0, named=True)
    assert kept["extraction"] == "sentences"


def test_a_streaming_judge_asks_before_it_grounds_and_grounds_before_the_last_report_is_read(llm, calls, monkeypatch):
    """The endpoint first: the caller works on answers only while the next request would wait (for room,
    or because enough answered chunks are held), so reading and asking never wait for grounding, and
    what is held stays bounded."""
    from dreval_assets.core import report_parser
    from dreval_assets.stages import statements as statements_stage
    from dreval_assets.stages.parse import parse_with_statements

    n = 200  # one chunk per report: ~7 of the judge's preparation chunks of 32
    reports = pl.DataFrame([{"system": f"s{i:03d}", "task": "t", "status": "ok", "detail": "",
                             "text": REPORT.replace("41,200", f"{41_200 + i:,}")} for i in range(n)])
    parse, grounding = report_parser.parse_report, statements_stage._grounding
    read: list[str] = []
    grounded: list[str] = []
    read_when_grounded: list[int] = []

    def recorded_parse(text):
        read.append(text)
        # within the second chunk, the first one's answers are in before it is asked; within the fifth,
        # the first four's: answered chunks are not held past four (twice the two chunks asked ahead)
        answered_before = {50: 32, 150: 128}.get(len(read))
        if answered_before:
            deadline = time.monotonic() + 5
            while llm.n_calls < answered_before and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.2)
        return parse(text)

    def recorded_grounding(chunk, judgment):
        read_when_grounded.append(len(read))
        grounded.append(chunk.system)
        return grounding(chunk, judgment)

    monkeypatch.setattr(report_parser, "parse_report", recorded_parse)
    monkeypatch.setattr(statements_stage, "_grounding", recorded_grounding)
    frames = parse_with_statements(reports, make_judge(llm, calls, concurrency=4), set(), {"asset": "parsed_reports"}, [])
    assert read_when_grounded[0] >= 96  # three chunks asked before any answer was grounded
    assert read_when_grounded[0] <= 160  # and not the whole batch held until its end
    assert grounded[:32] == [f"s{i:03d}" for i in range(32)]  # in the order asked
    assert len(grounded) == n and llm.n_calls == n
    claims = frames["report_claims"]
    assert claims.get_column("system").to_list() == sorted(claims.get_column("system").to_list())
    assert set(claims.get_column("extraction").to_list()) == {"llm"}


class _MiscountingJudge:
    """A judge that answers one request more or one fewer than it was asked (a bug of ours, never data)."""

    def __init__(self, llm, calls, extra: int):
        self.real, self.extra = make_judge(llm, calls), extra

    def judge_many(self, requests):
        judgments = self.real.judge_many(requests)
        return judgments + judgments[:1] if self.extra > 0 else judgments[:-1]


@pytest.mark.parametrize("extra, said", [(1, "more than the 1 "), (-1, "answered 0 of 1 ")])
def test_a_judge_that_miscounts_its_answers_fails_the_extraction_plainly(llm, calls, extra, said):
    claims = parsed_claims({("sys-a", "wlc.lowmarsh"): REPORT})
    with pytest.raises(RuntimeError, match=said):
        extract_statements(claims, _MiscountingJudge(llm, calls, extra), labels={"asset": "parsed_reports"})


def test_a_frame_taken_as_a_table_is_what_its_rows_make_and_a_missing_column_is_said():
    """`frames.as_table`: the statements' frame as report_claims without a trip through Python rows."""
    from dreval_assets.stages.frames import SCHEMAS, as_table, frame
    from dreval_assets.stages.statements import STATEMENT_SCHEMA

    rows = [{**{k: None for k in STATEMENT_SCHEMA}, "system": "s", "task": "t", "claim_id": f"c{i}.s1",
             "kind": "sentence", "text": f"Ridership rose {i} %.", "citation_indices": [i], "urls": ["https://a.example"],
             "unresolved_indices": [], "source_claim": f"c{i}", "extraction": "llm"} for i in range(3)]
    statements = pl.DataFrame(rows, schema=STATEMENT_SCHEMA, orient="row").with_columns(pl.lit(1).alias("extra"))
    taken = as_table("report_claims", statements)
    assert taken.columns == list(SCHEMAS["report_claims"]) and taken.equals(frame("report_claims", rows))
    with pytest.raises(KeyError, match="report_claims frame lacks \\['text'\\]"):
        as_table("report_claims", statements.drop("text"))


def test_the_commands_parse_helper_parses_and_grounds_to_the_same_rows_then_ends(llm, calls, monkeypatch):
    """`dreval run` parses its first evaluation's reports and grounds their statements in a helper process
    (the second core), this process doing what the helper has not begun when it would wait for it (how
    much is a race, `test_ui_metadata`): the same frames as parsed here, the helper ends with the parse it
    served, and a parse after it is done here again."""
    from dreval_assets.core import report_parser, statements as core_statements
    from dreval_assets.stages import parse_helper
    from dreval_assets.stages.parse import parse_with_statements

    reports = pl.DataFrame([
        {"system": "s1", "task": "t", "status": "ok", "detail": "", "text": REPORT},
        {"system": "s2", "task": "t", "status": "ok", "detail": "", "text": ZH_REPORT},
        {"system": "s3", "task": "t", "status": "missing", "detail": "no file s3/t.md", "text": None},
        *({"system": f"s{n}", "task": "t", "status": "ok", "detail": "",
           "text": REPORT.replace("41,200", f"{41_200 + n:,}")} for n in range(4, 14))])
    judge = make_judge(llm, calls)
    labels = {"asset": "parsed_reports"}
    here = parse_with_statements(reports, judge, set(), labels, [])
    parse_helper.start_parse_helper()
    assert parse_helper.HELPER.started

    done_here = []

    def counted(function):  # the helper has its own modules: only what this process does is counted
        def run(*args):
            done_here.append(function.__name__)
            return function(*args)
        return run

    monkeypatch.setattr(report_parser, "parse_report", counted(report_parser.parse_report))
    monkeypatch.setattr(core_statements, "grounding_problem", counted(core_statements.grounding_problem))
    helped = parse_with_statements(reports, judge, set(), labels, [])
    assert not parse_helper.HELPER.started  # ended with the parse it served
    for name in ("parsed_reports", "report_claims"):
        assert helped[name].equals(here[name]), name
    assert helped["report_claims"].filter(pl.col("extraction") == "llm").height > 0
    done_here.clear()
    parse_with_statements(reports, judge, set(), labels, [])
    assert done_here.count("parse_report") == reports.filter(pl.col("status") == "ok").height  # all here now
    assert "grounding_problem" in done_here


def test_each_chunks_rows_are_made_as_its_answer_comes_in_the_order_asked_and_the_same_as_at_the_end(llm, calls,
                                                                                                     monkeypatch):
    """A streaming judge's answered chunks become rows while later answers are awaited (not all after the
    last one: the claims wait for them), in the order asked, and the frame is the one a judge that
    answers all at once gives."""
    from dreval_assets.stages import statements as stage

    real, yielded, made_at = make_judge(llm, calls), [], []

    class AllAtOnce(Streaming):
        streams_requests = False

    chunk_rows = stage._chunk_rows
    monkeypatch.setattr(stage, "_chunk_rows", lambda chunk, *rest: made_at.append((chunk.system, len(yielded)))
                        or chunk_rows(chunk, *rest))
    claims = parsed_claims({(f"sys-{i}", "wlc.lowmarsh"): REPORT.replace("41,200", f"{41_200 + i:,}") for i in range(4)})
    streamed, summary = extract_statements(claims, Streaming(real, yielded), labels={"asset": "parsed_reports"})
    assert [at for _, at in made_at] == [1, 2, 3, 4]  # each as its answer came
    assert [system for system, _ in made_at] == [f"sys-{i}" for i in range(4)]
    made_at.clear()
    at_once, summary_at_once = extract_statements(claims, AllAtOnce(real, yielded), labels={"asset": "parsed_reports"})
    assert streamed.height > 4 and streamed.equals(at_once)
    asked = ["calls", "tokens_in", "tokens_out"]  # the second asking is answered from the cache
    assert summary.drop(asked).equals(summary_at_once.drop(asked)) and summary.get_column("n_statements").sum() > 4


def test_each_reports_statements_are_handed_on_as_its_last_chunk_is_grounded_in_the_order_asked(llm, calls):
    """`on_report`: a report's statements, once all its chunks are answered and grounded (its claims can be
    judged while later reports are asked), in the order read, and together the frame returned."""
    from dreval_assets.stages.statements import extract_statements_of

    real, yielded, handed = make_judge(llm, calls), [], []
    claims = parsed_claims({(f"sys-{i}", "wlc.lowmarsh"): REPORT.replace("41,200", f"{41_200 + i:,}")
                            for i in range(3)})
    reports = [claims.filter(pl.col("system") == f"sys-{i}").to_dicts() for i in (2, 0, 1)]  # read in this order
    statements, _ = extract_statements_of(iter(reports), Streaming(real, yielded), {"asset": "parsed_reports"},
                                          chunk_chars=250,
                                          on_report=lambda system, task, found: handed.append((system, len(yielded),
                                                                                               found)))
    per_report = len(yielded) // 3
    assert per_report > 1 and len(yielded) == 3 * per_report  # each report cut into the same chunks
    assert [(system, at) for system, at, _ in handed] == [("sys-2", per_report), ("sys-0", 2 * per_report),
                                                          ("sys-1", 3 * per_report)]
    for system, _, found in handed:
        assert found.height and found.equals(statements.filter(pl.col("system") == system))
