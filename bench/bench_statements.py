"""What extracting statements costs and changes on the demo (no network, no key).

    python bench/bench_statements.py

Parses every bundled demo report (three systems and the extra one), then asks the OpenAI-compatible
judge, pointed at the loopback server and its stand-in model, for the statements of each report
(`stages.statements.extract_statements`, default chunk size). Per report it prints the parser's units
against the grounded statements kept, the chunks (= extraction calls) and their tokens, what grounding
dropped; then the claim verdicts that follow (`stages.verdicts.judge_claims`, batch size 8, every
cited page read from the demo's sandbox): claim-source pairs and verdict calls with the parser's
sentences and with the statements. Each measurement uses a fresh call cache, so calls are not hidden
by cache hits. Loopback tokens are characters / 4; the stand-in splits rather than paraphrases, so
statements here are close to the sentences: a real model writes more and shorter ones.

Measured on the demo (32 reports, 472 parser units): 475 statements kept, 0 dropped as ungrounded
(the stand-in invents nothing unless a unit holds its probe marker); 32 extraction calls (every demo
report fits one 6,000-character chunk), 886 tokens in and 507 out per report on average (1,255 / 893
at most). Claim-source pairs 464 with sentences, 476 with statements; verdict requests 97 and 96: the
verdict cost follows the cited sources (one request per source per 8 claims), not the claim count.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import polars as pl  # noqa: E402
from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402

from dreval_assets.judges.openai_config import OpenAIJudgeConfig  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402
from dreval_assets.stages.frames import text_hash  # noqa: E402
from dreval_assets.stages.parse import parse_reports  # noqa: E402
from dreval_assets.stages.statements import extract_statements  # noqa: E402
from dreval_assets.stages.verdicts import judge_claims  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402
from dreval_assets.store.judge_calls import JudgeCallStore  # noqa: E402

DEMO = ROOT / "dreval_assets" / "demo"
BATCH_SIZE = 8


def demo_reports() -> pl.DataFrame:
    rows = []
    for folder in sorted([*(DEMO / "systems").iterdir(), *(DEMO / "extra_systems").iterdir()]):
        for path in sorted(folder.glob("*.md")):
            rows.append({"system": folder.name, "task": path.stem, "status": "ok",
                         "text": path.read_text(encoding="utf-8"), "detail": ""})
    return pl.DataFrame(rows)


def sandbox_pages() -> tuple[pl.DataFrame, dict[str, str]]:
    """Every demo sandbox page as a fetched reference of every system (the page text by its hash)."""
    pages = [json.loads(line) for line in (DEMO / "sandbox.jsonl").read_text(encoding="utf-8").splitlines() if line]
    texts = {text_hash(p["text"]): p["text"] for p in pages}
    return pl.DataFrame([{"task": p["task_id"], "url": p["url"], "title": p["title"], "status": "ok",
                          "page_hash": text_hash(p["text"]), "na_reason": None, "detail": ""} for p in pages]), texts


def fresh_judge(llm: LoopbackLLM, folder: Path, name: str) -> OpenAIJudge:
    store = Store(folder / f"{name}.duckdb")
    store.ensure_schema()
    config = OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="loopback", timeout_s=30)
    return OpenAIJudge(config, JudgeCallStore(store))


def verdict_calls(llm: LoopbackLLM, folder: Path, name: str, claims: pl.DataFrame, pages: pl.DataFrame,
                  texts: dict[str, str]) -> dict[tuple[str, str], tuple[int, int]]:
    """Per report: claim-source pairs judged and the verdict requests they took (one per cache key)."""
    fetched = claims.select("system", "task").unique().join(pages, on="task").with_columns(url_norm=pl.col("url"))
    verdicts = judge_claims(claims, fetched, texts, fresh_judge(llm, folder, name), batch_size=BATCH_SIZE)
    per_report = verdicts.filter(pl.col("template") != "").group_by("system", "task").agg(
        pl.len(), pl.col("cache_key").n_unique())
    return {(system, task): (pairs, calls) for system, task, pairs, calls in per_report.iter_rows()}


COLUMNS = ("units", "statements", "chunks", "tokens_in", "tokens_out", "ungrounded",
           "pairs_sentences", "pairs_statements", "verdicts_sentences", "verdicts_statements")


def main() -> None:
    reports = demo_reports()
    claims = parse_reports(reports)["report_claims"]
    pages, texts = sandbox_pages()
    with tempfile.TemporaryDirectory() as tmp, LoopbackLLM(answer=dreval_answer) as llm:
        folder = Path(tmp)
        statements, summary = extract_statements(claims, fresh_judge(llm, folder, "extraction"))
        by_sentence = verdict_calls(llm, folder, "verdicts_sentences", claims, pages, texts)
        by_statement = verdict_calls(llm, folder, "verdicts_statements", statements, pages, texts)
    print(f"{'system':<16} {'task':<24} " + " ".join(f"{c:>{max(6, len(c))}}" for c in COLUMNS))
    totals = dict.fromkeys(COLUMNS, 0)
    for row in summary.sort("system", "task").iter_rows(named=True):
        key = (row["system"], row["task"])
        s_pairs, s_calls = by_sentence.get(key, (0, 0))
        t_pairs, t_calls = by_statement.get(key, (0, 0))
        figures = dict(zip(COLUMNS, (row["n_units"], row["n_statements"], row["n_chunks"], row["tokens_in"],
                                     row["tokens_out"], row["n_ungrounded"], s_pairs, t_pairs, s_calls, t_calls)))
        totals = {c: totals[c] + figures[c] for c in COLUMNS}
        print(f"{row['system']:<16} {row['task']:<24} " + " ".join(f"{figures[c]:>{max(6, len(c))}}" for c in COLUMNS))
    print(f"{'total':<41} " + " ".join(f"{totals[c]:>{max(6, len(c))}}" for c in COLUMNS))
    n = len(summary)
    print(f"{n} reports: {totals['statements'] / totals['units']:.2f} statements per unit; extraction "
          f"{totals['chunks']} calls, {totals['tokens_in'] / n:.0f} tokens in and {totals['tokens_out'] / n:.0f} out "
          f"per report; verdict requests {totals['verdicts_sentences']} with sentences, "
          f"{totals['verdicts_statements']} with statements")


if __name__ == "__main__":
    main()
