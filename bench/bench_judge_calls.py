"""LLM judge throughput against a loopback chat-completions server (no network, no key).

    python bench/bench_judge_calls.py

1. Concurrency: one report of 100 claims, per-claim calls, a server that answers after 200 ms;
   concurrency 1 vs 16.
2. Batching: every cited claim of the demo verified per claim (batch size 1) vs batched by source
   (batch size 8): calls and prompt tokens.
3. Per report (batch size 8): judge calls against claims and distinct cited sources, and tokens:
   the citation stage costs O(distinct sources), not O(claims).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402

from dreval_assets.releases.generic import load_generic  # noqa: E402
from dreval_assets.core.models import ClaimVerdict  # noqa: E402
from dreval_assets.judges.base import JudgmentRequest  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402
from dreval_assets.stages.fetch import fetch_references  # noqa: E402
from dreval_assets.fetch.chain import ChainFetcher  # noqa: E402
from dreval_assets.stages.parse import parse_reports  # noqa: E402
from dreval_assets.stages.reports import read_reports  # noqa: E402
from dreval_assets.stages.verdicts import judge_claims  # noqa: E402
from dreval_assets.store.registry import SystemEntry  # noqa: E402

DEMO = ROOT / "dreval_assets" / "demo"
PAGE = ("The Lowmarsh ferry carried 41,200 passengers in 2023, up from 36,900 in 2022. The operator, "
        "Estuary Links, added a third vessel named Curlew in March 2023. ") * 20


def judge(llm: LoopbackLLM, concurrency: int) -> OpenAIJudge:
    # no call store: every request goes to the server
    return OpenAIJudge(OpenAIJudgeConfig(model="loopback", base_url=llm.base_url, api_key="bench",
                                         concurrency=concurrency))


def concurrency_ratio() -> None:
    requests = [JudgmentRequest("claim_verdict", {"claim": f"The ferry carried {40_000 + i} passengers in 2023.",
                                                  "source_url": "https://f.example", "source_title": "t",
                                                  "source_text": PAGE}, ClaimVerdict) for i in range(100)]
    with LoopbackLLM(answer=dreval_answer, latency_s=0.2) as llm:
        timings = {}
        for concurrency in (1, 16):
            started = time.perf_counter()
            judgments = judge(llm, concurrency).judge_many(requests)
            timings[concurrency] = time.perf_counter() - started
            assert all(j.answer is not None for j in judgments)
    print(f"100 claims, 200 ms per answer: concurrency 1 {timings[1]:.2f} s, concurrency 16 {timings[16]:.2f} s "
          f"-> {timings[1] / timings[16]:.1f}x faster")


def demo_claims():
    loaded = load_generic(DEMO)
    tasks = {t.key: t for t in loaded.tasks}
    systems = {p.name: SystemEntry(p.name, p.name, "folder", str(p)) for p in (DEMO / "systems").iterdir() if p.is_dir()}
    keys = [(s, t) for s in systems for t in tasks]
    reports = read_reports(keys, systems, {k: t.original_id for k, t in tasks.items()})
    claims = parse_reports(reports)["report_claims"]
    fetched = fetch_references(claims, {k: t.sandbox for k, t in tasks.items()}, ChainFetcher(), keys)
    texts = {r["text_hash"]: r["text"] for r in fetched["page_texts"].iter_rows(named=True)}
    return claims, fetched["fetched_references"], texts


def batching_ratio() -> None:
    claims, fetched, texts = demo_claims()
    results = {}
    for batch_size in (1, 8):
        with LoopbackLLM(answer=dreval_answer) as llm:
            verdicts = judge_claims(claims, fetched, texts, judge(llm, 16), batch_size=batch_size)
            judged = verdicts.filter(verdicts["template"] != "").height
            results[batch_size] = (llm.n_calls, llm.prompt_tokens_total, judged)
    (calls1, tokens1, judged), (calls8, tokens8, _) = results[1], results[8]
    print(f"demo, {judged} judged claim x source pairs: per claim {calls1} calls / {tokens1:,} prompt tokens; "
          f"batched by source (8) {calls8} calls / {tokens8:,} prompt tokens "
          f"-> {calls1 / calls8:.1f}x fewer calls, {tokens1 / tokens8:.1f}x fewer prompt tokens")


def per_report_calls() -> None:
    claims, fetched, texts = demo_claims()
    rows = []
    with LoopbackLLM(answer=dreval_answer) as llm:
        for (system, task), group in claims.group_by(["system", "task"], maintain_order=True):
            cited = group.filter(group["kind"] != "uncited")
            sources = {u for urls in cited["urls"].to_list() for u in urls}
            before_calls, before_tokens = llm.n_calls, llm.prompt_tokens_total + llm.completion_tokens_total
            judge_claims(group, fetched, texts, judge(llm, 16), batch_size=8)
            rows.append((cited.height, len(sources), llm.n_calls - before_calls,
                         llm.prompt_tokens_total + llm.completion_tokens_total - before_tokens))
    cited_reports = [r for r in rows if r[0]]
    n = len(cited_reports)
    mean = lambda i: sum(r[i] for r in cited_reports) / n  # noqa: E731
    worst = max(r[2] / max(1, r[1]) for r in cited_reports)
    print(f"per report with citations ({n} reports): {mean(0):.1f} cited claims, {mean(1):.1f} distinct sources, "
          f"{mean(2):.1f} judge calls, {mean(3):,.0f} tokens; calls per distinct source at most {worst:.2f}")


if __name__ == "__main__":
    concurrency_ratio()
    batching_ratio()
    per_report_calls()
