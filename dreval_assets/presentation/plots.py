"""The leaderboard's plots as PNG bytes (matplotlib's Agg canvas, no display, no global pyplot state):
each suite's headline score with its 95 % interval per system, a system x metric heatmap, and how
systems' ranks shift between benchmarks (and judges). A system with no score is drawn as N/A, never 0.

Dagster-free: the leaderboard asset saves them under `<home>/plots/` and embeds them in its metadata.
"""
from __future__ import annotations

import io
import math
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import polars as pl

from ..background import in_background
from ..helper_process import HelperProcess
from .leaderboard_view import UNJUDGED, BoardTable, leaderboard_tables, no_number

HEATMAP_METRICS_PER_SUITE = 3  # the headline metrics a suite shows in the heatmap (its first ones with scores)
DPI = 72  # small files: they are embedded in the UI's metadata as data: URIs
NA_COLOUR = "#d9d9d9"


@dataclass(frozen=True)
class Plot:
    name: str       # file stem under <home>/plots/
    title: str
    png: bytes


def panel_label(table: BoardTable, tables: list[BoardTable]) -> str:
    """The suite, or `suite (judge)` when a suite has tables for several judges."""
    judges = {t.judge for t in tables if t.suite == table.suite}
    if len(judges) > 1 and table.judge != UNJUDGED:
        return f"{table.suite} ({table.judge})"
    return table.suite


def headline_rows(table: BoardTable) -> pl.DataFrame:
    """The ranked (headline) column's row per system, in the table's display order."""
    return table.rows.filter(pl.col("column") == table.ranked_by)


# drawn by the plot helper process, when the command started one (~0.65 + 0.13 s at 10 systems), while a
# thread here draws the heatmap (~0.38 s) beside the leaderboard run's own work: its published copy
# (DuckDB, without the interpreter lock) and the agreement; the leaderboard run 2.13 -> 1.98 s at 10 x 10
HELPED = ("headline_ci", "rank_shifts")
PLOT_HELPER = HelperProcess()


def leaderboard_plots(board: pl.DataFrame) -> list[Plot]:
    """All three plots of a leaderboard frame; none when it holds no rows."""
    return begin_leaderboard_plots(board).result()


def begin_leaderboard_plots(board: pl.DataFrame) -> Future:
    """Start drawing the plots of a leaderboard frame and return their future (`leaderboard_plots`'
    list): the helper's begin in the plot helper process, the rest on a thread here, so the caller goes
    on meanwhile (the leaderboard run writes its published copy while they are drawn)."""
    tables = [t for t in leaderboard_tables(board) if t.ranked_by]
    helped = {name: PLOT_HELPER.submit(draw_png, name, tables) for name in HELPED} if tables else {}
    return in_background(_drawn, tables, helped, name="dreval-plots")


def _drawn(tables: list[BoardTable], helped: dict[str, Future | None]) -> list[Plot]:
    """The plots not begun in the helper drawn here, then the helper's (drawn here if it could not)."""
    if not tables:
        return []
    _WARMING.wait_done()  # one figure at a time: matplotlib's font caches are shared
    drawn = {name: draw_png(name, tables) for name in PLOTS if name not in helped}
    for name, future in helped.items():
        drawn[name] = PLOT_HELPER.result_or_here(future, draw_png, name, tables)
    if any(helped.values()):  # a command draws one leaderboard: the helper's ~150 MB are not held past it
        PLOT_HELPER.close(wait=False)  # the command's end waits for it
    return [Plot(name, title, drawn[name]) for name, (title, _) in PLOTS.items()]


def draw_png(name: str, tables: list[BoardTable]) -> bytes:
    """One plot by its name (in whichever process draws it)."""
    return PLOTS[name][1](tables)


class _WarmUp:
    """`warm_up` once per process, on a daemon thread (`start`); plotting waits for it to end."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="dreval-plots-warm-up", daemon=True)
                self._thread.start()

    def wait_done(self) -> None:
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join()

    @staticmethod
    def _run() -> None:
        try:
            warm_up()
        except Exception:  # only a head start: the leaderboard's own plots say what is wrong
            pass


_WARMING = _WarmUp()


def start_warm_up() -> None:
    """Make matplotlib ready on a thread of its own (once per process): for a process that will plot a
    leaderboard and has time to spare first (waiting on a judge, `defs/runner`)."""
    _WARMING.start()


def start_plot_helper() -> None:
    """Start the plot helper process (once), warmed like this one: for the command's own process."""
    PLOT_HELPER.start(warm_up)


def warm_up() -> None:
    """Draw and encode one small figure with the artists the leaderboard's plots use (text, markers, an
    image with its colour bar, a legend, the labels' extents), so matplotlib's import, fonts and
    caches are ready: ~0.6 s of a process's first leaderboard plots (1.67 -> 1.06 s at 10 x 10)."""
    import numpy as np

    figure = _figure(4, 2)
    left, right = figure.subplots(1, 2)
    left.plot([0, 1], [0, 1], "o-", label="a", linewidth=2, markersize=6)
    left.annotate("1.0", (1, 1), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    left.text(0.02, 0.5, "N/A", transform=left.get_yaxis_transform(), fontsize=9, style="italic")
    left.set_yticks([0, 1], ["a", "b"], fontsize=8)
    left.grid(axis="x", alpha=0.3)
    left.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    image = right.imshow(np.ma.masked_invalid([[1.0, np.nan]]), cmap="viridis", vmin=0, vmax=100, aspect="auto")
    right.axhline(0.5, color="white", linewidth=2)
    right.xaxis.tick_top()
    figure.colorbar(image, ax=right, shrink=0.6, label="score")
    figure.suptitle("warm-up", fontsize=10)
    _text_in(figure, ["a", "b"], 8)
    _png(figure)


def save_plots(plots: list[Plot], folder: Path) -> list[Path]:
    """Write each plot as `<folder>/leaderboard_<name>.png` (replacing the last run's)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for plot in plots:
        path = folder / f"leaderboard_{plot.name}.png"
        tmp = path.with_suffix(".png.tmp")
        tmp.write_bytes(plot.png)
        tmp.replace(path)  # a reader never sees half a file
        paths.append(path)
    return paths


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # imported here: ~1 s, only when plotting
    from matplotlib.figure import Figure

    # no layout engine: each plot places its axes from the extents of its widest labels (`_text_in`); the
    # constrained layout measured every artist before the draw measured them again (~0.3 s of the
    # headline plot's 0.76 at 10 x 10)
    figure = Figure(figsize=(width, height), dpi=DPI)
    FigureCanvasAgg(figure)
    return figure


PAD_IN = 0.08  # between a label and what it labels, and at the figure's edges


def _text_in(figure, texts, fontsize: float) -> tuple[float, float]:
    """The widest and the tallest of `texts` (lines split at newlines) at `fontsize`, in inches, as the
    figure's renderer sets them."""
    from matplotlib.font_manager import FontProperties

    renderer = figure.canvas.get_renderer()
    prop = FontProperties(size=fontsize)
    line_height = renderer.get_text_width_height_descent("Ag", prop, ismath=False)[1] * 1.2 / figure.dpi
    width, lines = 0.0, 0
    for text in texts:
        parts = str(text).split("\n")
        lines = max(lines, len(parts))
        width = max([width] + [renderer.get_text_width_height_descent(part, prop, ismath=False)[0] / figure.dpi
                               for part in parts if part])
    return width, lines * line_height


def _place(figure, ax, left: float, bottom: float, width: float, height: float) -> None:
    """The axes' box, in inches from the figure's lower left corner."""
    fig_width, fig_height = figure.get_size_inches()
    ax.set_position([left / fig_width, bottom / fig_height, max(width, 0.1) / fig_width,
                     max(height, 0.1) / fig_height])


def _png(figure) -> bytes:
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI)
    return out.getvalue()


def headline_ci_png(tables: list[BoardTable]) -> bytes:
    """One panel per suite (and judge): systems top to bottom by rank, the headline score as a dot, its
    95 % bootstrap interval as a bar; a system without a score says N/A where its dot would be."""
    columns = 2 if len(tables) > 1 else 1
    rows = math.ceil(len(tables) / columns)
    systems = max(headline_rows(t).height for t in tables)
    figure = _figure(11, max(2.2, rows * (0.9 + 0.32 * systems)))
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for ax, table in zip(axes, tables):
        data = headline_rows(table)
        names = data.get_column("system").to_list()
        ys = list(range(len(names)))[::-1]
        for y, row in zip(ys, data.iter_rows(named=True)):
            if row["mean"] is None:
                ax.text(0.02, y, no_number(row.get("status")), transform=ax.get_yaxis_transform(), va="center", color="#666666",
                        fontsize=9, style="italic")
                continue
            if row["ci_low"] is not None and row["ci_high"] is not None:
                ax.plot([row["ci_low"], row["ci_high"]], [y, y], color="#4c72b0", linewidth=2.5, alpha=0.6)
            ax.plot([row["mean"]], [y], "o", color="#1f3b73", markersize=6)
            ax.annotate(f"{row['mean']:.1f}", (row["mean"], y), textcoords="offset points", xytext=(0, 6),
                        ha="center", fontsize=8)
        ax.set_yticks(ys, [f"{n} ({r['n_scored']}/{r['n_tasks']})" for n, r in zip(names, data.iter_rows(named=True))],
                      fontsize=8)
        ax.set_ylim(-0.7, len(names) - 0.3)
        _x_limits(ax, data)
        title = f"{panel_label(table, tables)}: {table.ranked_by.split('.', 1)[1]}"
        ax.set_title(title + _missing_ci_note(data), fontsize=9, loc="left")
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=8)
    for ax in axes[len(tables):]:
        ax.set_visible(False)
    figure.suptitle("Headline score per system, 95 % bootstrap CI (scored/tasks)", fontsize=10,
                    y=1 - PAD_IN / figure.get_size_inches()[1], va="top")
    _place_panels(figure, axes[:len(tables)], columns)
    return _png(figure)


def _place_panels(figure, axes, columns: int) -> None:
    """A grid of panels, each column as far right of its widest y labels as they need, each row below
    its titles and above its x labels."""
    width, height = figure.get_size_inches()
    rows = math.ceil(len(axes) / columns)
    tick_in = 3.5 / 72  # a tick mark's length
    label_width = [max([_text_in(figure, [t.get_text() for t in ax.get_yticklabels()], 8)[0]
                        for ax in axes[c::columns]] or [0.0]) for c in range(columns)]
    x_labels_in = _text_in(figure, ["0"], 8)[1] + tick_in + PAD_IN
    top_in = _text_in(figure, ["A"], 10)[1] + 2 * PAD_IN
    cell_width, cell_height = width / columns, (height - top_in) / rows
    boxes = []
    for index, ax in enumerate(axes):
        column = index % columns
        left = column * cell_width + label_width[column] + tick_in + 2 * PAD_IN
        boxes.append((left, column * cell_width + cell_width - left - 2 * PAD_IN))
        title = ax.get_title(loc="left")
        if "  (" in title and _text_in(figure, [title], 9)[0] > boxes[-1][1]:  # its note on a line of its own
            ax.set_title(title.replace("  (", "\n(", 1), fontsize=9, loc="left")
    titles_in = [_text_in(figure, [ax.get_title(loc="left") for ax in axes[row * columns:(row + 1) * columns]], 9)[1]
                 for row in range(rows)]  # each row below its tallest title
    for index, (ax, (left, box_width)) in enumerate(zip(axes, boxes)):
        row = index // columns
        title_in = titles_in[row]
        top = height - top_in - row * cell_height
        _place(figure, ax, left, top - cell_height + x_labels_in, box_width,
               cell_height - x_labels_in - title_in - PAD_IN)


def _missing_ci_note(data: pl.DataFrame) -> str:
    """Why no bar is drawn: a composite of the parts' aggregates has no bootstrap; one task gives none."""
    if data.filter(pl.col("ci_low").is_not_null()).height:
        return ""
    if data.get_column("aggregation").fill_null("").str.starts_with("of_parts").any():
        return "  (no CI: formula over the parts' aggregates)"
    return "  (no CI: too few scored tasks)"


def _x_limits(ax, data: pl.DataFrame) -> None:
    values = [v for c in ("mean", "ci_low", "ci_high") for v in data.get_column(c).to_list() if v is not None]
    if not values:
        ax.set_xlim(0, 100)
        return
    low, high = min(values), max(values)
    pad = max(2.0, (high - low) * 0.15)
    ax.set_xlim(min(0.0, low - pad) if low >= 0 else low - pad, high + pad)


def heatmap_columns(tables: list[BoardTable]) -> list[tuple[str, BoardTable]]:
    """Per table, its first headline metrics on the 0-100 scale that some system has a score for."""
    picked = []
    for table in tables:
        scored = table.rows.filter(pl.col("mean").is_not_null() & (pl.col("scale") == "0-100"))
        present = dict.fromkeys(scored.get_column("column").to_list())
        ordered = [table.ranked_by] + [c for c in present if c != table.ranked_by]
        picked += [(c, table) for c in ordered if c in present][:HEATMAP_METRICS_PER_SUITE]
    return picked


def heatmap_matrix(tables: list[BoardTable]):
    """(row labels, systems, values): one row per picked metric, one column per system, NaN where the
    system has no score (drawn grey and written N/A, never as 0)."""
    import numpy as np

    columns = heatmap_columns(tables)
    systems = sorted({s for t in tables for s in t.rows.get_column("system").to_list()})
    values = np.full((max(1, len(columns)), len(systems)), np.nan)
    labels = []
    for i, (column, table) in enumerate(columns):
        judge = f" ({table.judge})" if panel_label(table, tables) != table.suite else ""
        labels.append(column + judge)
        for system, mean in table.rows.filter(pl.col("column") == column).select("system", "mean").iter_rows():
            if mean is not None:
                values[i, systems.index(system)] = mean
    return labels, systems, values


def heatmap_png(tables: list[BoardTable]) -> bytes:
    """Metrics (rows, grouped by suite) x systems (columns), coloured 0-100; N/A cells grey and written N/A."""
    import numpy as np

    columns = heatmap_columns(tables)
    labels, systems, values = heatmap_matrix(tables)
    figure = _figure(max(5.0, 1.3 * len(systems) + 3.5), max(2.5, 0.32 * len(columns) + 1.4))
    ax = figure.subplots()
    ax.set_facecolor(NA_COLOUR)
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis", vmin=0, vmax=100, aspect="auto")
    for i in range(len(columns)):
        for j in range(len(systems)):
            value = values[i, j]
            text = "N/A" if math.isnan(value) else f"{value:.1f}"
            colour = "#333333" if math.isnan(value) or value > 60 else "white"
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color=colour)
    suites = [table.suite for _, table in columns]
    for i in range(1, len(suites)):
        if suites[i] != suites[i - 1]:
            ax.axhline(i - 0.5, color="white", linewidth=2)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_xticks(range(len(systems)), systems, fontsize=8)
    ax.xaxis.tick_top()
    ax.set_title("Systems x headline metrics (grey: N/A, no score)", fontsize=10)
    width, height = figure.get_size_inches()
    left = _text_in(figure, labels, 8)[0] + 4 * PAD_IN
    top = _text_in(figure, systems, 8)[1] + _text_in(figure, ["A"], 10)[1] + 4 * PAD_IN
    tick_labels, label = _text_in(figure, ["100"], 10)[0], _text_in(figure, ["score (0-100)"], 10)[1]
    colour_bar = tick_labels + label + 4 * PAD_IN  # right of the bar: its tick labels, then its label
    _place(figure, ax, left, PAD_IN, width - left - colour_bar - PAD_IN, height - top - PAD_IN)
    # its room taken from the axes' right as placed (by its grid cell, it would undo the placing)
    figure.colorbar(image, ax=ax, shrink=0.6, label="score (0-100)", use_gridspec=False, fraction=0.02, pad=0.02)
    return _png(figure)


def rank_table(tables: list[BoardTable]) -> pl.DataFrame:
    """system, panel, rank: each system's rank on each table's headline column (null when unranked)."""
    rows = []
    for table in tables:
        label = f"{panel_label(table, tables)}\n{table.ranked_by.split('.', 1)[1]}"
        for system, rank in headline_rows(table).select("system", "rank").iter_rows():
            rows.append({"system": system, "panel": label, "rank": rank})
    return pl.DataFrame(rows, schema={"system": pl.String, "panel": pl.String, "rank": pl.Int64})


def rank_shifts_png(tables: list[BoardTable]) -> bytes:
    """A bump chart: one column per benchmark (and judge), rank 1 on top, a line per system; a system
    a benchmark did not rank has no point there (its line breaks) and N/A is written at the bottom."""
    ranks = rank_table(tables)
    panels = list(dict.fromkeys(ranks.get_column("panel").to_list()))
    systems = sorted(set(ranks.get_column("system").to_list()))
    worst = max([r for r in ranks.get_column("rank").to_list() if r is not None] or [1])
    figure = _figure(max(6.0, 1.1 * len(panels) + 3.0), max(2.6, 0.5 * worst + 2.0))
    ax = figure.subplots()
    unranked: dict[int, list[tuple[str, str]]] = {}
    for system in systems:
        by_panel = dict(ranks.filter(pl.col("system") == system).select("panel", "rank").iter_rows())
        ys = [by_panel.get(p) for p in panels]
        line = ax.plot(range(len(panels)), [math.nan if y is None else y for y in ys], "o-", label=system,
                       linewidth=2, markersize=7)[0]
        for x, panel in enumerate(panels):
            if panel in by_panel and by_panel[panel] is None:
                unranked.setdefault(x, []).append((system, line.get_color()))
    for x, entries in unranked.items():  # below the last rank, one line per system the benchmark left N/A
        for k, (system, colour) in enumerate(entries):
            ax.annotate(f"N/A: {system}", (x, worst + 0.55 + 0.22 * k), ha="center", fontsize=7, color=colour)
    ax.set_xticks(range(len(panels)), panels, fontsize=8)
    ax.set_yticks(range(1, worst + 1))
    ax.set_ylim(worst + 0.75 + 0.22 * max([len(e) for e in unranked.values()] or [0]), 0.5)
    ax.set_ylabel("rank on the headline metric (shared tasks)", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title("Rank shifts between benchmarks", fontsize=10)
    width, height = figure.get_size_inches()
    left = _text_in(figure, ["rank"], 8)[1] + _text_in(figure, [str(worst)], 8)[0] + 5 * PAD_IN
    bottom = _text_in(figure, panels, 8)[1] + 3 * PAD_IN
    legend = _text_in(figure, systems, 7)[0] + 0.5  # its line and marker, then the name
    top = _text_in(figure, ["A"], 10)[1] + 3 * PAD_IN
    _place(figure, ax, left, bottom, width - left - legend - 2 * PAD_IN, height - bottom - top)
    return _png(figure)


# The leaderboard's plots, in the order they are shown: name (file stem): (title, how it is drawn).
PLOTS: dict[str, tuple[str, Callable[[list[BoardTable]], bytes]]] = {
    "headline_ci": ("Headline score per system with 95 % CI", headline_ci_png),
    "heatmap": ("Systems x metrics", heatmap_png),
    "rank_shifts": ("Rank shifts between benchmarks", rank_shifts_png),
}
