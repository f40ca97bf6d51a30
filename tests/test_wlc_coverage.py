"""Wiki Live Cov. Wiki and Wiki Conf.: formulas by hand, the Wikipedia filter, BM25 top-10, batching,
the loopback judge, N/A reasons and the offline values on the demo's Wiki Live task."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from dreval_assets.benchmarks.evidence import ReportEvidence
from dreval_assets.benchmarks.judging import JudgmentContext
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.benchmarks.wlc.coverage import (CONFLICT_TEMPLATE, FACTS_PER_CALL, TEMPLATE, Statement, batches,
                                                   calls_needed, gold_coverage, report_statements, top_statements)
from dreval_assets.benchmarks.wlc.heuristic import gold_fact_label, statement_conflict
from dreval_assets.benchmarks.wlc.inputs import task_inputs
from dreval_assets.benchmarks.wlc.metrics import cov_wiki, wiki_conf
from dreval_assets.core.report_parser import parse_report
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.judges.prompts import render
from dreval_assets.stages.frames import frame
from loopback_llm import delay, status
from recording_judge import RecordingJudge

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
WLC_TASK = "Harrowgate Tidal Barrage"
WIKI = "https://en.wikipedia.org/wiki/Harrowgate"


def test_formulas_by_hand():
    assert cov_wiki(["consistent", "inconsistent", "not_supported", "consistent"]) == 50.0
    assert cov_wiki(["consistent"] * 3 + ["not_supported"] * 9) == pytest.approx(25.0)
    assert wiki_conf(3, 20) == 15.0 and wiki_conf(0, 7) == 0.0
    with pytest.raises(ValueError):
        cov_wiki([])
    with pytest.raises(ValueError):
        wiki_conf(1, 0)


def claim(cid, text, urls=(), kind="sentence"):
    return {"claim_id": cid, "kind": kind, "text": text, "urls": list(urls)}


def test_statements_citing_wikipedia_are_dropped():
    rows = [claim("c1", "The barrage opened in 1967.", ["https://www.tidal.example/a"]),
            claim("c2", "The barrage is 610 metres long.", [WIKI]),
            claim("c3", "It cost 22 million pounds.", kind="uncited"),
            claim("c4", "Figure 1: the barrage.", kind="figure_caption")]
    kept, dropped = report_statements(rows)
    assert [s.claim_id for s in kept] == ["c1", "c3"] and dropped == 1
    assert [s.sid for s in kept] == ["r1", "r2"]


def test_retrieval_keeps_the_ten_best_by_bm25():
    texts = [f"The barrage turbine number {n} was replaced in 2013." for n in range(12)]
    texts += ["Dunlin numbers fell sharply.", "The barrage turbine hall has ribbon windows and 16 turbines."]
    top = top_statements("The barrage has 16 turbines.", texts)
    assert len(top) == 10 and top[0] == 13  # the statement naming 16 turbines ranks first
    assert 12 not in top  # sharing no term, it ranks below the ten that share "barrage" and "turbine"
    dunlin = top_statements("Dunlin fell.", texts)
    assert len(dunlin) == 10 and dunlin[0] == 12  # k = min(10, n) candidates for every gold statement
    assert len(top_statements("Nothing shared here.", texts[:3])) == 3  # fewer than 10 statements: all of them
    assert top_statements("anything", []) == []


def test_batching_ten_gold_statements_per_call_and_the_token_budget():
    assert calls_needed(100) == 10 and calls_needed(13) == 2 and FACTS_PER_CALL == 10
    statements = [Statement(f"r{n}", f"c{n}", f"Statement {n} about the barrage.") for n in range(1, 31)]
    facts = [(f"g{n:03d}", f"fact {n}", [n % 30, (n + 1) % 30]) for n in range(100)]
    assert [len(b) for b in batches(facts, statements, 6_000)] == [10] * 10
    tight = batches(facts, statements, 40)  # each statement costs ~10 tokens: about two facts a call
    assert len(tight) > 10 and all(len(b) >= 1 for b in tight)
    assert [f for b in tight for f in b] == facts  # every fact once, in order


def context(keys, reports, tasks, claims, judge):
    return JudgmentContext(keys, frame("reports", reports), frame("tasks", tasks), frame("task_rubrics", []), judge,
                           claims=frame("report_claims", claims))


def report_row(system, task, text="report", status_="ok"):
    from dreval_assets.stages.frames import SCHEMAS
    return {**{k: None for k in SCHEMAS["reports"]}, "system": system, "task": task, "status": status_, "text": text}


def task_row(task, gold):
    from dreval_assets.stages.frames import SCHEMAS
    row = {k: None for k in SCHEMAS["tasks"]}
    return {**row, "task": task, "benchmark": "wlc", "gold_facts": gold, "query": "Write about the barrage."}


def claim_row(system, task, cid, text, urls=(), kind="sentence"):
    from dreval_assets.stages.frames import SCHEMAS
    row = {k: None for k in SCHEMAS["report_claims"]}
    return {**row, "system": system, "task": task, "claim_id": cid, "kind": kind, "text": text, "urls": list(urls),
            "citation_indices": [], "unresolved_indices": []}


def scored(rows: pl.DataFrame, n_gold: int, system="s", task="t", judge="heuristic", policies=None) -> dict:
    """The wlc suite's fact rows from the judgment rows, as stages/scores.py hands them over."""
    mine = rows.filter((pl.col("system") == system) & (pl.col("task") == task))
    ev = ReportEvidence(system, task, "wlc", judge, inputs={"wlc.gold_facts": n_gold}, policies=policies or {},
                        rubric_scores=dict(zip(mine["item_id"], mine["score"])),
                        judgment_failures={r["item_id"]: (r["na_reason"], r["reason"] or "")
                                           for r in mine.iter_rows(named=True) if r["na_reason"]})
    return {v.metric: v for v in SUITES["wlc"].score(ev) if v.metric in ("cov_wiki", "wiki_conf")}


def test_a_hundred_gold_statements_cost_ten_calls_and_wikipedia_statements_never_reach_the_judge():
    gold = [f"Turbine {n} of the barrage was replaced in {1900 + n}." if n % 2 == 0
            else f"Gate {n} was painted green by the Westmarch crew." for n in range(100)]
    claims = [claim_row("s", "t", f"c{n}", f"Turbine {n} of the barrage was replaced in {1900 + n}.",
                        ["https://www.tidal.example/t"]) for n in range(0, 100, 2)]
    claims.append(claim_row("s", "t", "cw", "Turbine 1 of the barrage was replaced in 1901 by Westmarch.", [WIKI]))
    judge = RecordingJudge()
    rows = gold_coverage(context([("s", "t")], [report_row("s", "t")], [task_row("t", gold)], claims, judge))
    by_template = [r.template for r in judge.requests]
    # 100 gold statements, ten a call; 50 report statements against their own gold statements, ten a call
    assert by_template.count(TEMPLATE) == 10 and by_template.count(CONFLICT_TEMPLATE) == 5 and len(by_template) == 15
    prompts = [render(r.template, dict(r.variables)) for r in judge.requests]
    assert not any("1901" in p.split("<<<STATEMENTS", 1)[1].split("STATEMENTS>>>")[0] for p in prompts)  # dropped
    m = scored(rows, 100)
    assert m["cov_wiki"].value == 50.0 and m["cov_wiki"].n_items == 100  # the even turbines are stated, no gate
    assert m["wiki_conf"].value == 0.0 and m["wiki_conf"].n_items == 50
    count = rows.filter(pl.col("item_id") == "wlc.gold_statements.count")
    assert "1 citing Wikipedia dropped" in count["reason"].item()


def test_a_failed_gold_batch_makes_cov_wiki_na_never_a_share_of_the_rest():
    """20 gold statements, two calls; the second fails: Cov. Wiki is N/A with the failure (it was the share
    of the first ten, a larger number than the paper's over all 20), and the partition is due again."""
    from judge_answers import dreval_answer
    from loopback_llm import LoopbackLLM

    gold = [f"Turbine {n} of the barrage was replaced in {1900 + n}." for n in range(20)]
    claims = [claim_row("s", "t", f"c{n}", f"Turbine {n} of the barrage was replaced in {1900 + n}.",
                        ["https://www.tidal.example/t"]) for n in range(0, 20, 2)]
    with LoopbackLLM(answer=dreval_answer) as llm:
        judge = OpenAIJudge(OpenAIJudgeConfig(model="m", base_url=llm.base_url, api_key="k", timeout_s=5,
                                              max_attempts=1, concurrency=1))
        llm.fail_next(delay(0), status(500))  # the first gold call answers, the second fails
        rows = gold_coverage(context([("s", "t")], [report_row("s", "t")], [task_row("t", gold)], claims, judge))
    m = scored(rows, 20, judge=judge.judge_id)
    assert m["cov_wiki"].value is None and m["cov_wiki"].na_reason == "provider_failure"
    assert "10 of 20 gold statements unjudged" in m["cov_wiki"].detail


def test_offline_labels_name_the_contradicting_statement():
    statements = [{"id": "r1", "text": "Construction began in 1959, and the barrage was opened in 1967."},
                  {"id": "r2", "text": "The barrage is 650 metres long and includes a 65-metre ship lock."},
                  {"id": "r3", "text": "A road across the top links Harrowgate with Selby Point."}]
    wrong = gold_fact_label("The barrage is 610 metres long.", statements)
    assert wrong.label == "inconsistent" and wrong.statements == ["r2"]
    right = gold_fact_label("The barrage was opened in 1967.", statements)
    assert right.label == "consistent" and right.statements == ["r1"]
    assert gold_fact_label("The dunlin population fell by 40 percent.", statements).label == "not_supported"


def test_offline_statement_conflict_names_the_gold_fact():
    facts = [{"id": "g001", "text": "The barrage is 610 metres long."},
             {"id": "g002", "text": "The barrage was opened in 1967."},
             {"id": "g003", "text": "The barrage was designed by the engineer Margaret Ellery of Ellery & Doyle."}]
    found = statement_conflict("The barrage is 650 metres long.", facts)
    assert found.label == "conflict" and found.facts == ["g001"] and found.reason.startswith("heuristic")
    assert statement_conflict("The barrage was opened in 1967 by a minister.", facts).label == "no_conflict"
    assert statement_conflict("A road links Harrowgate with Selby Point.", facts).label == "no_conflict"
    too_little = statement_conflict("The barrage is 650 metres long.", facts[:1])  # a 6-word page decides nothing
    assert too_little.label == "no_conflict" and "too little text" in too_little.reason


def test_na_reasons_no_gold_no_statements_and_judge_failures():
    m = scored(frame("report_judgments", []), 0)
    assert all(v.value is None and v.na_reason == "pipeline_failure" and v.detail == "the task has no gold statements"
               for v in m.values())
    keys = [("s", "t")]
    only_wiki = [claim_row("s", "t", "c1", "The barrage is 610 metres long.", [WIKI])]
    judge = RecordingJudge()
    rows = gold_coverage(context(keys, [report_row("s", "t")], [task_row("t", ["The barrage is 610 m long."])],
                                 only_wiki, judge))
    assert judge.requests == []  # nothing to check against: no call
    m = scored(rows, 1)
    # every statement cites Wikipedia: the ban leaves nothing to state the gold fact, a decided 0 (the system's)
    assert m["cov_wiki"].value == 0.0 and m["wiki_conf"].na_reason == "model_failure"
    assert "1 citing Wikipedia dropped" in rows.filter(pl.col("kind") == "gold_fact")["reason"].item()
    nothing = scored(gold_coverage(context(keys, [report_row("s", "t")], [task_row("t", ["The barrage is 610 m long."])],
                                           [], RecordingJudge())), 1)
    assert all(v.value is None and v.na_reason == "model_failure" for v in nothing.values())  # it wrote nothing
    assert "no statements" in nothing["cov_wiki"].detail
    assert task_inputs([{"task": "t", "gold_facts": ["a", " "]}], None, None)["t"]["wlc.gold_facts"] == 1


def test_loopback_judge_and_a_failing_endpoint(llm, calls):
    gold = ["The barrage is 610 metres long and includes a ship lock.", "The barrage was opened in 1967.",
            "Dunlin fell by 40 percent.", "The barrage was designed by the engineer Margaret Ellery."]
    claims = [claim_row("s", "t", "c1", "Construction began in 1959, and the barrage was opened in 1967.", ["u"]),
              claim_row("s", "t", "c2", "The barrage is 650 metres long and includes a 65-metre ship lock.", ["u"]),
              claim_row("s", "t", "c3", "A road across the top of the barrage links Harrowgate with Selby Point.")]
    config = OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5)
    judge = OpenAIJudge(config, calls)
    rows = gold_coverage(context([("s", "t")], [report_row("s", "t")], [task_row("t", gold)], claims, judge))
    assert llm.n_calls == 2 and judge.stats.tokens_in > 0  # one Cov. Wiki call, one Wiki Conf. call
    sent = [m["content"] for r in llm.requests for m in r["messages"] if "<<<FACTS" in str(m["content"])]
    assert len(sent) == 1  # each report statement with its own min(10, n) = 4 gold facts, every fact shown once
    assert sent[0].count("related facts: g00") == 3 and sent[0].count("\n[g00") == 4
    assert "- [r2] The barrage is 650 metres long" in sent[0]
    m = scored(rows, 4, judge=judge.judge_id)
    assert m["cov_wiki"].value == pytest.approx(100 / 4) and m["wiki_conf"].value == pytest.approx(100 / 3)
    assert m["wiki_conf"].n_items == 3 and "gen_conflict_with_wiki" in m["wiki_conf"].policy
    per_statement = rows.filter(pl.col("kind") == "statement_conflict")
    assert dict(zip(per_statement["item_id"], per_statement["score"])) == {
        "wlc.statement_conflict.c1": 0.0, "wlc.statement_conflict.c2": 1.0, "wlc.statement_conflict.c3": 0.0}
    assert "g001" in per_statement.filter(pl.col("score") == 1.0)["reason"].item()
    conflict = rows.filter(pl.col("kind") == "gold_conflict")
    assert conflict["item_id"].to_list() == ["wlc.gold_conflict.c2"] and "g001" in conflict["reason"].item()
    gold_side = scored(rows, 4, judge=judge.judge_id, policies={"wlc.wiki_conf": "gold_side"})
    assert gold_side["wiki_conf"].value == pytest.approx(100 / 3) and "gold_side" in gold_side["wiki_conf"].policy
    llm.fail_next(status(401), status(401))  # the Cov. Wiki call and the Wiki Conf. call
    failing = OpenAIJudge(OpenAIJudgeConfig(model="other-model", base_url=llm.base_url, api_key="k", timeout_s=5,
                                            max_attempts=1, concurrency=1), calls)
    rows = gold_coverage(context([("s", "t")], [report_row("s", "t")], [task_row("t", gold)], claims, failing))
    m = scored(rows, 4, judge=failing.judge_id)
    assert all(v.value is None and v.na_reason == "provider_failure" for v in m.values())


def demo_context(judge, systems=("careful-scholar", "loose-cannon", "quiet-summarizer")):
    task = next(t for t in map(json.loads, (DEMO / "tasks.jsonl").read_text().splitlines()) if t["id"] == WLC_TASK)
    claims, reports = [], []
    for system in systems:
        text = (DEMO / "systems" / system / f"{WLC_TASK}.md").read_text()
        reports.append(report_row(system, WLC_TASK, text))
        claims += [claim_row(system, WLC_TASK, c.claim_id, c.text, c.urls, c.kind) for c in parse_report(text).claims]
    keys = [(s, WLC_TASK) for s in systems]
    return context(keys, reports, [task_row(WLC_TASK, task["gold_facts"])], claims, judge), len(task["gold_facts"])


def test_offline_values_on_the_demo():
    judge = HeuristicJudge()
    ctx, n_gold = demo_context(judge)
    rows = gold_coverage(ctx)
    # Cov. Wiki: 2 calls per report; Wiki Conf.: 23, 20 and 3 statements, ten a call (3 + 2 + 1)
    assert n_gold == 13 and judge.stats.requests == 3 * calls_needed(13) + 6 == 12
    values = {s: {k: round(v.value, 1) for k, v in scored(rows, n_gold, s, WLC_TASK).items()}
              for s, _ in ctx.keys}
    # careful-scholar's "before refurbishment ... 290" is not read against the gold "since ... 320": the
    # two values are framed apart (before / since a change), so they fill different slots
    assert values == {"careful-scholar": {"cov_wiki": 92.3, "wiki_conf": 0.0},  # 12 of 13; 0 of 23
                      "loose-cannon": {"cov_wiki": 46.2, "wiki_conf": 30.0},  # 6 of 13; 6 of 20 contradict
                      "quiet-summarizer": {"cov_wiki": 0.0, "wiki_conf": 0.0}}  # vague: 0 of 13; 0 of 3


def test_embedding_retriever_through_the_endpoint_cached_and_named(calls):
    from dreval_assets.judges.embeddings import EMBEDDING_TEMPLATE, cosine_top
    from loopback_llm import LoopbackLLM, hashed_vector
    from judge_answers import dreval_answer

    gold = ["The barrage is 610 metres long and includes a ship lock.", "The barrage was opened in 1967.",
            "Dunlin fell by 40 percent.", "The barrage was designed by the engineer Margaret Ellery."]
    texts = ["Construction began in 1959, and the barrage was opened in 1967.",
             "The barrage is 650 metres long and includes a 65-metre ship lock.",
             "A road across the top of the barrage links Harrowgate with Selby Point."]
    claims = [claim_row("s", "t", f"c{n}", text, ["u"]) for n, text in enumerate(texts, start=1)]

    def run(llm):
        config = OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5,
                                   embedding_model="embed-model", max_attempts=1)
        judge = OpenAIJudge(config, calls)
        return judge, gold_coverage(context([("s", "t")], [report_row("s", "t")], [task_row("t", gold)], claims,
                                            judge))

    with LoopbackLLM(answer=dreval_answer) as llm:
        judge, rows = run(llm)
        embedded = [r for r in llm.requests if r.get("_path") == "/v1/embeddings"]
        assert len(embedded) == 1 and embedded[0]["model"] == "embed-model"
        assert sorted(embedded[0]["input"]) == sorted(gold + texts)  # every text once, one request
        # each gold fact's candidates are the report statements by cosine of the endpoint's vectors
        prompt = next(m["content"] for r in llm.requests for m in r.get("messages", [])
                      if "You check whether an encyclopedia article" in str(m["content"]))
        for n, fact in enumerate(gold, start=1):
            order = cosine_top(hashed_vector(fact), [hashed_vector(t) for t in texts], 10)
            assert f"[g{n:03d}] {fact}\n  related statements: " + ", ".join(f"r{i + 1}" for i in order) in prompt
        retriever = rows.filter(pl.col("item_id").str.starts_with("wlc.gold_retriever."))["item_id"].to_list()
        assert retriever == ["wlc.gold_retriever.embeddings (embed-model)"]
        m = {v.metric: v for v in SUITES["wlc"].score(ReportEvidence(
            "s", "t", "wlc", judge.judge_id, inputs={"wlc.gold_facts": 4},
            rubric_scores=dict(zip(rows["item_id"], rows["score"]))))}
        assert "retriever: embeddings (embed-model)" in m["cov_wiki"].detail
        assert "by embeddings (embed-model)" in m["wiki_conf"].policy
        chat_calls = llm.n_calls - len(embedded)
        _, again = run(llm)  # re-running asks nothing: vectors and judgments come from the cache
        assert llm.n_calls == len(embedded) + chat_calls and again.sort("item_id").equals(rows.sort("item_id"))
    ledger = calls.store.query(f"SELECT count(*) FROM judge_ledger WHERE template = '{EMBEDDING_TEMPLATE}'").item()
    assert ledger == 1

    with LoopbackLLM(answer=dreval_answer, embedding_models=frozenset({"another-model"})) as llm:
        config = OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5,
                                   embedding_model="missing-embedder", max_attempts=1)
        failing = OpenAIJudge(config, calls)
        rows = gold_coverage(context([("s", "t")], [report_row("s", "t")], [task_row("t", gold)], claims, failing))
        assert [r.get("_path") for r in llm.requests] == ["/v1/embeddings"]  # no judge call on failed retrieval
    facts = rows.filter(pl.col("kind") == "gold_fact")
    assert facts["score"].null_count() == 4 and set(facts["na_reason"]) == {"provider_failure"}
    assert all("retrieval by embeddings (missing-embedder) failed" in r and "404" in r for r in facts["reason"])
    m = scored(rows, 4, judge=failing.judge_id)
    assert all(v.value is None and v.na_reason == "provider_failure" for v in m.values())
    assert "embeddings (missing-embedder) failed" in m["cov_wiki"].detail and "bm25" not in m["cov_wiki"].detail
