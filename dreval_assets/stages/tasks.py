"""tasks: registered Task objects -> the tasks, task_sandbox and page_texts rows."""
from __future__ import annotations

import json
from typing import Iterable, Sequence

import polars as pl

from ..core.models import SandboxPage, Task
from ..fetch.urls import url_key
from ..store.registry import task_hash
from .frames import frame, text_hash


def task_frames(tasks: Sequence[Task]) -> dict[str, pl.DataFrame]:
    task_rows, sandbox_rows, text_rows = [], [], {}
    for task in tasks:
        task_rows.append({
            "task": task.key, "benchmark": task.benchmark, "original_id": task.original_id,
            "query": task.query, "language": task.language, "domain": task.domain,
            "modality": task.modality, "attachments": task.attachments, "checklist": task.checklist,
            "reference_article": task.reference_article, "gold_facts": task.gold_facts,
            "n_sandbox_pages": len(task.sandbox), "content_hash": task_hash(task),
            "gold_insights": task.gold_insights, "gold_insights_sandbox": task.gold_insights_sandbox,
            "visual_ground_truth": task.visual_ground_truth,
            "visual_ground_truth_version": task.visual_ground_truth_version,
            "race_criteria": task.race_criteria.model_dump_json() if task.race_criteria else None,
            "attributes": json.dumps(task.attributes, ensure_ascii=False, sort_keys=True),
        })
        attachments = [SandboxPage(url=f"attachment:{name}", title=name, role="attachment", text=text)
                       for name, text in task.attachment_texts.items()]
        for page in [*task.sandbox, *attachments]:
            digest = text_hash(page.text)
            text_rows[digest] = {"text_hash": digest, "text": page.text, "n_chars": len(page.text)}
            sandbox_rows.append({"task": task.key, "url": page.url, "url_norm": url_key(page.url),
                                 "title": page.title, "role": page.role, "text_hash": digest,
                                 "corpora": ",".join(page.corpora)})
    return {
        "tasks": frame("tasks", task_rows),
        "task_sandbox": frame("task_sandbox", sandbox_rows),
        "page_texts": frame("page_texts", text_rows.values()),
    }


def sandbox_pages(task_sandbox: pl.DataFrame, texts: dict[str, str]) -> dict[str, list[SandboxPage]]:
    """Rebuild each task's sandbox corpus from stored rows and page texts."""
    pages: dict[str, list[SandboxPage]] = {}
    for row in task_sandbox.iter_rows(named=True):
        pages.setdefault(row["task"], []).append(SandboxPage(
            url=row["url"], title=row["title"] or "", role=row["role"], text=texts.get(row["text_hash"], ""),
            corpora=corpora_of(row)))
    return pages


def corpora_of(row) -> list[str]:
    """The named corpora a task_sandbox row's page is in (`corpora`, comma-joined; rows written before
    migration 031 have none)."""
    return [c for c in (row.get("corpora") or "").split(",") if c]


def run_corpus(system: str, corpora: Iterable[str]) -> str:
    """The named corpus a system's run searched: the one its key ends with (`<model>-<corpus>`, as a
    release that runs each model on several corpora names its runs: DR³'s `gpt-4-128k`), else "" (the
    run names none of them: it is shown every page)."""
    return next((c for c in sorted(set(corpora), key=len, reverse=True) if system.endswith(f"-{c}")), "")


def pages_of_run(system: str, pages: Sequence[SandboxPage]) -> list[SandboxPage]:
    """The pages a system's run could find: those of its corpus and those in every corpus (attachments);
    all of them when the task has no named corpora or the run names none."""
    corpus = run_corpus(system, (c for p in pages for c in p.corpora))
    return [p for p in pages if not corpus or not p.corpora or corpus in p.corpora]


def sandbox_for_suites(tasks: dict[str, pl.DataFrame], store, extra_suites=()) -> dict[str, list[SandboxPage]]:
    """The sandbox corpora of the tasks whose suites look for evidence beyond the citations."""
    from ..benchmarks.suites import needs_sandbox_evidence, suite_names

    wanted = [row["task"] for row in tasks["tasks"].iter_rows(named=True)
              if needs_sandbox_evidence(suite_names(row["benchmark"], extra_suites))]
    if not wanted:
        return {}
    sandbox = tasks["task_sandbox"].filter(pl.col("task").is_in(wanted))
    pages = sandbox_pages(sandbox, store.texts(sandbox.get_column("text_hash").to_list()))
    return {task: pages.get(task, []) for task in wanted}  # a task with no sandbox is still searched on the web


def attachments_by_task(task_sandbox: pl.DataFrame, texts: dict[str, str]) -> dict[str, dict[str, str]]:
    """task -> readable attachment name -> text (the `attachment` rows of the task sandboxes)."""
    found: dict[str, dict[str, str]] = {}
    for row in task_sandbox.filter(pl.col("role") == "attachment").iter_rows(named=True):
        found.setdefault(row["task"], {})[row["title"] or row["url"]] = texts.get(row["text_hash"], "")
    return found
