"""What the evaluation steps make, as functions of their inputs: called by the assets' bodies and by the
chain that makes them ahead of the steps (`defs/ahead.py`), so both make the same frames."""
from __future__ import annotations

import threading
import time
from functools import partial
from typing import Callable, Iterator, TypeVar

import polars as pl

from ..benchmarks.cited_sources import CitedSources
from ..benchmarks.judging import JudgmentContext
from ..judges.judge_loop import ENDPOINT_FULL
from ..stages.attachment_images import task_images, with_image_facts
from ..stages.fetch import fetch_references
from ..stages.judgments import judge_reports
from ..stages.parse import (ReportClaims, parse_reports, parse_with_statements, release_statement_keys,
                            with_release_statements)
from ..stages.report_images import find_report_images, image_roots, judgment_figures
from ..stages.reports import read_reports
from ..stages.scores import ask_same_statements_ahead
from ..stages.tasks import sandbox_for_suites, sandbox_pages
from ..stages.verdicts import ClaimsPart, judge_claims_of
from ..store.imports import imported_reports
from ..store.registry import load_tasks
from ..store.tables import ASSET_STORAGE
from .resources import DrevalResource

Keys = list[tuple[str, str]]
Frames = dict[str, pl.DataFrame]
JUDGED = ("claim_verdicts", "report_judgments")  # the judge step's assets
T = TypeVar("T")


def as_input(asset: str, frames: Frames) -> pl.DataFrame | Frames:
    """`frames` as a step downstream gets them: the asset's own tables; one table as a frame."""
    tables = ASSET_STORAGE[asset].tables
    return frames[tables[0]] if len(tables) == 1 else {table: frames[table] for table in tables}


def read_the_reports(dreval: DrevalResource, keys: Keys, systems: dict, original_ids: dict[str, str],
                     written: dict) -> pl.DataFrame:
    """The `reports` frame: folder and imported systems read, endpoint systems' reports as `written`."""
    imported = imported_reports(dreval.store(), of_kind(keys, systems, "imported"))
    return read_reports(keys, systems, original_ids, imported, written)


def of_kind(keys: Keys, systems: dict, kind: str) -> Keys:
    """The partitions whose system is registered as `kind` (folder, imported, endpoint)."""
    return [key for key in keys if key[0] in systems and systems[key[0]].kind == kind]


def parsed_frames(dreval: DrevalResource, reports: pl.DataFrame, keys: Keys, run_id: str,
                  on_report: ReportClaims | None = None) -> tuple[Frames, dict]:
    """parsed_reports' frames and the figures its metadata records; `run_id`: the run its requests are for;
    `on_report`: handed each report's claims as soon as they are known (stages/parse.py)."""
    shipped = release_statement_keys(reports, dreval.policy_map())
    judge = None
    if dreval.extraction() == "llm":
        judge = dreval.judge()  # the release's statements are not re-extracted
        frames = parse_with_statements(reports, judge, shipped, {"run_id": run_id, "asset": "parsed_reports"},
                                       keys, on_report)
    else:
        frames = parse_reports(reports, on_report)
    sentences = int(frames["parsed_reports"].get_column("n_claims").sum())
    frames = with_release_statements(frames, reports, shipped)
    return frames, {"sentence_claims": sentences, **(judge.stats.metadata() if judge is not None else {})}


def image_frames(dreval: DrevalResource, reports: pl.DataFrame, parsed: Frames, tasks: Frames) -> Frames:
    return find_report_images(reports, parsed["parsed_reports"], image_roots(dreval.store(), reports, tasks["tasks"]),
                              dreval.remote_images(), parsed["report_claims"])


def fetched_frames(dreval: DrevalResource, parsed: Frames, tasks: Frames, task_rubrics: pl.DataFrame,
                   keys: Keys) -> Frames:
    return fetch_references(parsed["report_claims"], fetch_sandbox(dreval, tasks, task_rubrics), dreval.fetcher(), keys)


def fetch_sandbox(dreval: DrevalResource, tasks: Frames, task_rubrics: pl.DataFrame) -> dict:
    """The tasks' sandbox pages by task, as the fetcher serves them."""
    sandbox = tasks["task_sandbox"]
    pages = sandbox_pages(sandbox, dreval.store().texts(sandbox.get_column("text_hash").to_list()))
    return with_image_facts(pages, task_rubrics)  # an image attachment reads as its key facts


def judged_pieces(dreval: DrevalResource, selected: set[str], run_id: str, keys: Keys, reports: pl.DataFrame,
                  tasks: Frames, task_rubrics: pl.DataFrame, parsed: Frames, fetched: pl.DataFrame,
                  images: pl.DataFrame | Callable[[], pl.DataFrame], claims_begun: tuple[object, Callable] | None = None
                  ) -> tuple[list[tuple[str, object]], list[Callable[[], object]]]:
    """The judge step's pieces, asked at once: ((asset, its judge) in order, then what builds each, with
    metric_scores' questions of the same claims after them (asked in this pool by a judge of their own,
    so the step's figures count only its assets' calls; `metric_scores` finds the answers cached)).
    `images` may be what makes report_images' frame: the report judgments' piece makes it first.
    `claims_begun`: (judge, its claim verdicts to come) when the claims are judged already (ahead, as
    their reports were parsed)."""
    named, builds = [], []  # each piece its own judge, so each asset's figures count its own calls
    claims_first = _FirstPiece()
    if "claim_verdicts" in selected:
        judge, verdicts = claims_begun or (dreval.judge(), None)
        named.append(("claim_verdicts", judge))
        builds.append(claims_first.marked(verdicts or partial(claim_verdicts, dreval, judge, run_id, parsed, fetched,
                                                              tasks, task_rubrics)))
    if "report_judgments" in selected:
        named.append(("report_judgments", dreval.judge()))
        builds.append(claims_first.after(partial(_report_judgments_with, dreval, named[-1][1], run_id, keys, reports,
                                                 tasks, task_rubrics, parsed, fetched, images)))
    if "claim_verdicts" in selected:
        builds.append(claims_first.after(partial(ask_same_statements_ahead, parsed["report_claims"], tasks["tasks"],
                                                 dreval.judge(), run_id)))
    return named, builds


FILL_WAIT_S = 2.0  # the longest the other pieces wait for the claim verdicts to fill the endpoint


class _FirstPiece:
    """The claim verdicts go first: the other pieces (the report judgments, which decode every figure
    before they ask, and the same-statement questions) begin once the claims' requests fill the endpoint
    (a request waits for a slot, `ENDPOINT_FULL`), once the claims are done, or after `FILL_WAIT_S`. Begun
    together, their CPU held the claims' first requests back (10 x 10 at 64: ~0.5 s from the pieces'
    start to the first claim verdict's request, the endpoint empty)."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._marked = False

    def marked(self, build: Callable[[], T]) -> Callable[[], T]:
        self._marked = True
        ENDPOINT_FULL.clear()  # full from an earlier step's requests says nothing of these

        def first() -> T:
            try:
                return build()
            finally:
                self._done.set()
        return first

    def after(self, build: Callable[[], T]) -> Callable[[], T]:
        if not self._marked:
            return build

        def later() -> T:
            deadline = time.monotonic() + FILL_WAIT_S
            while not (ENDPOINT_FULL.is_set() or self._done.is_set()) and time.monotonic() < deadline:
                self._done.wait(0.01)
            return build()
        return later


def _report_judgments_with(dreval: DrevalResource, judge, run_id: str, keys: Keys, reports: pl.DataFrame,
                           tasks: Frames, task_rubrics: pl.DataFrame, parsed: Frames, fetched: pl.DataFrame,
                           images: pl.DataFrame | Callable[[], pl.DataFrame]) -> pl.DataFrame:
    return report_judgments(dreval, judge, run_id, keys, reports, tasks, task_rubrics, parsed, fetched,
                            images() if callable(images) else images)


def claim_verdicts(dreval: DrevalResource, judge, run_id: str, parsed: Frames, fetched: pl.DataFrame,
                   tasks: Frames, task_rubrics: pl.DataFrame) -> pl.DataFrame:
    claims = parsed["report_claims"]
    texts = dreval.store().texts(fetched.get_column("page_hash").drop_nulls().to_list())
    return claim_verdicts_of(dreval, judge, run_id, iter([ClaimsPart(claims, fetched, texts)]), lambda: claims,
                             tasks, task_rubrics)


def claim_verdicts_of(dreval: DrevalResource, judge, run_id: str, parts: Iterator[ClaimsPart],
                      all_claims: Callable[[], pl.DataFrame], tasks: Frames,
                      task_rubrics: pl.DataFrame) -> pl.DataFrame:
    """claim_verdicts' frame from the reports' claims coming in parts (stages/verdicts.py)."""
    store = dreval.store()
    sandbox = with_image_facts(sandbox_for_suites(tasks, store, dreval.extra_suites), task_rubrics, listed_only=True)
    return judge_claims_of(parts, all_claims, judge, batch_size=dreval.judge_batch_size,
                           labels={"run_id": run_id, "asset": "claim_verdicts"}, sandbox_evidence=sandbox,
                           search=dreval.searcher(), tasks=tasks["tasks"])


def report_judgments(dreval: DrevalResource, judge, run_id: str, keys: Keys, reports: pl.DataFrame, tasks: Frames,
                     task_rubrics: pl.DataFrame, parsed: Frames, fetched: pl.DataFrame,
                     images: pl.DataFrame) -> pl.DataFrame:
    store = dreval.store()
    figures_of_tasks = task_images(load_tasks(store, sorted({task for _, task in keys})))
    return judge_reports(JudgmentContext(
        keys, reports, tasks["tasks"], task_rubrics, judge, dreval.extra_suites, dreval.policy_map(),
        {"run_id": run_id, "asset": "report_judgments"}, parsed["report_claims"],
        cited_sources=CitedSources(parsed["parsed_reports"], fetched, store.texts),
        figures=judgment_figures(store, images), task_images=figures_of_tasks))
