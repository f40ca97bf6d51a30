"""The results view's pages: each path (see urls.py) rendered from its template over the published
copy. Reports are untrusted input: every text reaches the page through Jinja2's autoescaping, the page
allows no script at all (Content-Security-Policy), and cited URLs are shown as text, never fetched."""
from __future__ import annotations

import base64
import hashlib
import re
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Iterator

import polars as pl
from jinja2 import Environment, PackageLoader, select_autoescape

from ...benchmarks.suites import SUITES
from ...core.keys import KEY_PATTERN
from ..leaderboard_summary import fmt, headline_cell
from ..leaderboard_view import MARK, footnotes, heading, leaderboard_tables, no_number
from ...store import results_view as reads
from . import urls
from .highlight import segments

# a claim's colour: its most decisive verdict over its sources
VERDICT_ORDER = ("contradicted", "supported", "partial", "unsupported", "unknown")
NO_VERDICT = "unchecked"
HASH_PATTERN = re.compile(r"^[0-9a-f]{8,128}$")
FIGURE_ITEM = re.compile(r"(?:^|\.)f(\d{2,})(?:\.|$)")  # a judgment item naming figure n (1-based): `...f01...`


@dataclass(frozen=True)
class Page:
    body: bytes
    media_type: str


def _stylesheet() -> str:
    return resources.files(__package__).joinpath("static/view.css").read_text(encoding="utf-8")


class Site:
    """Every page of one home's published results. Each page reads what it shows when asked, so the
    server shows a newly published copy on the next request."""

    def __init__(self, results: Path):
        self.results = results
        self.env = Environment(loader=PackageLoader(__package__, "templates"),
                               autoescape=select_autoescape(default=True, default_for_string=True),
                               trim_blocks=True, lstrip_blocks=True)
        css = _stylesheet()
        self.env.globals.update(css=css, css_hash=base64.b64encode(hashlib.sha256(css.encode()).digest()).decode(),
                                urls=urls, mark=MARK)
        self._plots: tuple[float, dict[str, bytes]] | None = None
        self._reader: reads.Results | None = None

    def store(self) -> reads.Results:
        assert self._reader is not None, "read inside reading()"
        return self._reader

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One read-only connection for the reads inside (reused when one is open already)."""
        if self._reader is not None:
            yield
            return
        with reads.opened(self.results) as reader:
            self._reader = reader
            try:
                yield
            finally:
                self._reader = None

    # -- routing

    def page(self, path: str) -> Page | None:
        """The page at `path` (relative to the root), or None when there is none."""
        with self.reading():
            return self._page(path)

    def _page(self, path: str) -> Page | None:
        parts = path.strip("/").split("/") if path.strip("/") else ["index.html"]
        if parts == ["index.html"]:
            return self._html("index.html.j2", path, self.leaderboard_context())
        if len(parts) == 2 and parts[0] == "systems" and _key(parts[1]):
            context = self.system_context(parts[1].removesuffix(".html"))
            return self._html("system.html.j2", path, context) if context else None
        if len(parts) == 3 and parts[0] == "reports" and _key(parts[1], bare=True) and _key(parts[2]):
            context = self.report_context(parts[1], parts[2].removesuffix(".html"))
            return self._html("report.html.j2", path, context) if context else None
        if len(parts) == 4 and parts[0] == "compare" and all(_key(p, bare=True) for p in parts[1:3]) and _key(parts[3]):
            context = self.compare_context(parts[1], parts[2], parts[3].removesuffix(".html"))
            return self._html("compare.html.j2", path, context) if context else None
        if len(parts) == 2 and parts[0] == "images":
            stem = parts[1].rsplit(".", 1)[0]
            found = reads.image(self.store(), stem) if HASH_PATTERN.match(stem) else None
            return Page(found[1], found[0]) if found else None
        if len(parts) == 2 and parts[0] == "plots" and parts[1].endswith(".png"):
            png = self.plots().get(parts[1].removesuffix(".png"))
            return Page(png, "image/png") if png else None
        return None

    def paths(self) -> Iterator[str]:
        """Every path the view has: pages, then the images and plots they show."""
        with self.reading():
            yield from self._paths()

    def _paths(self) -> Iterator[str]:
        store = self.store()
        found = reads.partitions(store)
        yield urls.index_path()
        for system in sorted(set(found.get_column("system").to_list())):
            yield urls.system_path(system)
        for system, task in found.select("system", "task").iter_rows():
            yield urls.report_path(system, task)
        for task, systems in found.group_by("task").agg(pl.col("system").sort()).sort("task").iter_rows():
            for i, first in enumerate(systems):
                for second in systems[i + 1:]:
                    yield urls.compare_path(task, first, second)
        for image_hash, mime in reads.image_kinds(store).iter_rows():
            yield urls.image_path(image_hash, mime)
        for name in self.plots():
            yield urls.plot_path(name)

    def _html(self, template: str, path: str, context: dict) -> Page:
        html = self.env.get_template(template).render(root=urls.root_of(path), **context)
        return Page(html.encode("utf-8"), "text/html; charset=utf-8")

    # -- the leaderboard

    def plots(self) -> dict[str, bytes]:
        """The leaderboard's plots (plots.py), drawn again only when the published copy changed."""
        from ..plots import leaderboard_plots

        stamp = self.results.stat().st_mtime
        if self._plots is None or self._plots[0] != stamp:
            self._plots = (stamp, {p.name: p.png for p in leaderboard_plots(reads.leaderboard(self.store()))})
        return self._plots[1]

    def leaderboard_context(self) -> dict:
        board = reads.leaderboard(self.store())
        tables = []
        for table in leaderboard_tables(board):
            columns = list(dict.fromkeys(table.rows.get_column("column").to_list()))
            systems = []
            for system, rows in table.rows.group_by("system", maintain_order=True):
                by_column = {r["column"]: r for r in rows.iter_rows(named=True)}
                ranked = by_column.get(table.ranked_by) or {}
                systems.append({
                    "system": system[0], "rank": ranked.get("rank"),
                    "headline": headline_cell(ranked) if ranked else "—",
                    "validity": fmt(ranked.get("validity"), 2) if ranked.get("validity") is not None else "—",
                    "shared": fmt(ranked.get("shared_mean"), 2) if ranked.get("shared_mean") is not None else "—",
                    "cells": {c: _cell(by_column[c]) if c in by_column else "—" for c in columns if c != table.ranked_by},
                    "note": ranked.get("coverage_note") or ""})
            anchor = f"suite-{table.suite}"  # a suite's later tables (other judges, values) get their own
            anchor += "" if all(t["anchor"] != anchor for t in tables) else f"-{len(tables)}"
            tables.append({"heading": heading(table), "suite": table.suite, "anchor": anchor, "ranked_by": table.ranked_by,
                           "n_shared": table.n_shared, "columns": [c for c in columns if c != table.ranked_by],
                           "systems": systems, "footnotes": footnotes(table)})
        return {"title": "Leaderboard", "tables": tables, "plots": list(self.plots()),
                "systems": sorted(set(board.get_column("system").to_list())) if board.height else []}

    # -- a system: where it loses points

    def system_context(self, system: str) -> dict | None:
        store = self.store()
        rows = reads.metric_rows(store, system)
        if rows.height == 0:
            return None
        tasks = sorted(set(rows.get_column("task").to_list()))
        found = reads.partitions(store)
        others = {t: sorted(s for s, in found.filter((pl.col("task") == t) & (pl.col("system") != system))
                            .select("system").iter_rows()) for t in tasks}
        grid: dict[tuple[str, str], dict] = {}
        metrics: list[tuple[str, str]] = []
        for r in rows.iter_rows(named=True):
            key = (r["suite"], r["metric"])
            if key not in grid:
                grid[key] = {}
                metrics.append(key)
            grid[key][r["task"]] = _heat(r)
        metrics.sort(key=lambda k: (k[0], _headline_index(*k), k[1]))
        suites = []  # one heatmap per suite, over the tasks it scored
        for suite in dict.fromkeys(s for s, _ in metrics):
            own = [m for s, m in metrics if s == suite]
            columns = sorted({t for m in own for t in grid[(suite, m)]})
            suites.append({"suite": suite, "tasks": columns,
                           "rows": [{"metric": m, "cells": [grid[(suite, m)].get(t) for t in columns]} for m in own]})
        return {"title": system, "system": system, "tasks": tasks, "others": others, "suites": suites}

    # -- a system x task: the report, its claims and their evidence

    def report_context(self, system: str, task: str) -> dict | None:
        store = self.store()
        report = reads.report(store, system, task)
        if report is None:
            return None
        claims = reads.claims(store, system, task)
        verdicts = reads.verdicts(store, system, task)
        spend = reads.spend(store, system, task)
        cards = _claim_cards(claims, verdicts)
        text = report["text"] or ""
        parts, missing = segments(text, [(c["claim_id"], c["text"]) for c in cards])
        labels = {c["claim_id"]: c["label"] for c in cards}
        judgments = reads.judgments(store, system, task)
        others = reads.partitions(store).filter((pl.col("task") == task) & (pl.col("system") != system))
        return {"title": f"{system} × {task}", "system": system, "task": reads.task(store, task) or {"task": task},
                "report": report, "segments": parts, "labels": labels, "cards": cards, "missing": missing,
                "counts": _verdict_counts(cards), "spend": spend.to_dicts(),
                "spend_of": {r["template"]: r for r in spend.iter_rows(named=True)},
                "figures": _figures(reads.figures(store, system, task), judgments),
                "metrics": _metric_rows(reads.metric_rows(store, system, task)),
                "judgments": judgments.to_dicts(), "others": others.get_column("system").to_list()}

    def compare_context(self, task: str, first: str, second: str) -> dict | None:
        sides = [self.report_context(system, task) for system in (first, second)]
        if any(s is None for s in sides):
            return None
        metrics = {}
        for i, side in enumerate(sides):
            for m in side["metrics"]:
                metrics.setdefault((m["suite"], m["metric"], m["judge"]), [None, None])[i] = m
        rows = [{"suite": s, "metric": m, "judge": j, "pair": pair}
                for (s, m, j), pair in sorted(metrics.items(), key=lambda kv: (kv[0][0], _headline_index(*kv[0][:2]), kv[0][1]))]
        return {"title": f"{first} vs {second} on {task}", "task": sides[0]["task"], "sides": sides, "metrics": rows}


def _key(part: str, bare: bool = False) -> bool:
    name = part if bare else part.removesuffix(".html")
    return (bare or part.endswith(".html")) and bool(KEY_PATTERN.match(name))


def _cell(row: dict) -> str:
    """`71.25 (5/8)` with the coverage mark, as the printed leaderboard writes it."""
    if row.get("status") == "not_applicable":
        return no_number(row["status"])
    mark = f" {MARK}" if row.get("coverage_note") and row.get("status") != "not_comparable" else ""
    number = fmt(row["mean"], 2) if row["mean"] is not None else no_number(row.get("status"))
    return f"{number} ({row['n_scored']}/{row['n_tasks']}){mark}"


def _headline_index(suite: str, metric: str) -> int:
    headline = SUITES[suite].headline if suite in SUITES else ()
    return headline.index(metric) if metric in headline else len(headline)


def _direction(suite: str, metric: str) -> int:
    spec = SUITES[suite].spec(metric) if suite in SUITES else None
    return spec.better if spec else 1


def _heat(row: dict) -> dict:
    """A heatmap cell: the value, and how far it is from the best on a 0-100 scale (0 best, 1 worst)
    in the metric's direction; no shade for counts and other scales, N/A with its reason."""
    value, scale = row["value"], row.get("scale") or ""
    loss = None
    if value is not None and scale in ("0-100", "0-1") and _direction(row["suite"], row["metric"]) != 0:
        share = value / (100.0 if scale == "0-100" else 1.0)
        loss = min(1.0, max(0.0, 1 - share if _direction(row["suite"], row["metric"]) > 0 else share))
    return {"text": fmt(value, 1) if value is not None else "N/A", "loss": loss,
            "shade": None if loss is None else int(round(loss * 10)),
            "why": "" if value is not None else f"{row['na_reason']}: {row['detail']}", "task": row["task"]}


def _claim_cards(claims: pl.DataFrame, verdicts: pl.DataFrame) -> list[dict]:
    by_claim: dict[str, list[dict]] = {}
    for v in verdicts.iter_rows(named=True):
        by_claim.setdefault(v["claim_id"], []).append(v)
    cards = []
    for c in claims.iter_rows(named=True):
        found = by_claim.get(c["claim_id"], [])
        labels = {v["verdict"] for v in found}
        label = next((v for v in VERDICT_ORDER if v in labels), NO_VERDICT)
        cards.append({**c, "label": label, "verdicts": found})
    return cards


def _verdict_counts(cards: list[dict]) -> list[tuple[str, int]]:
    counts = {}
    for card in cards:
        counts[card["label"]] = counts.get(card["label"], 0) + 1
    return [(label, counts[label]) for label in (*VERDICT_ORDER, NO_VERDICT) if label in counts]


def _figures(figures: pl.DataFrame, judgments: pl.DataFrame) -> list[dict]:
    """Each figure with its measures and the judgments naming it (item ids `...f<n>...`, 1-based)."""
    by_figure: dict[int, list[dict]] = {}
    for j in judgments.iter_rows(named=True):
        found = FIGURE_ITEM.search(j["item_id"] or "")
        if found:
            by_figure.setdefault(int(found.group(1)) - 1, []).append(j)
    out = []
    for f in figures.iter_rows(named=True):
        image = urls.image_path(f["image_hash"], f["mime"]) if f["image_hash"] and f["mime"] else None
        out.append({**f, "image": image, "verdicts": by_figure.get(f["figure"], [])})
    return out


def _metric_rows(rows: pl.DataFrame) -> list[dict]:
    out = [{**r, "shown": fmt(r["value"], 2) if r["value"] is not None else "N/A"} for r in rows.iter_rows(named=True)]
    return sorted(out, key=lambda r: (r["suite"], _headline_index(r["suite"], r["metric"]), r["metric"]))
