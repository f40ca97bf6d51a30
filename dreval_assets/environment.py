"""One setting read straight from the environment, where the work happens: the number parsers and the
caps on what is read (report bytes, image pixels, figures). Below every layer, so the core, the readers
and the judges need not import `config`, whose `Settings` sits above the benchmarks (it checks their
policies and suites)."""
from __future__ import annotations

import os
import re

from .errors import ConfigError


def env_int(name: str, default: int | None, minimum: int | None = None) -> int | None:
    """An integer setting from the environment; a malformed value is an error, not a default."""
    value = os.environ.get(name, "")
    if value == "":
        return default
    try:
        number = int(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a whole number") from exc
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name}={value!r}: expected a whole number >= {minimum}")
    return number


DEFAULT_REPORT_MAX_BYTES = 5_000_000


def report_max_bytes() -> int:
    """DREVAL_REPORT_MAX_BYTES: the largest report file read (bytes); a larger one is refused, saying so.
    Read where reports are read (folder systems, imports), so the planner and the run agree."""
    return env_int("DREVAL_REPORT_MAX_BYTES", DEFAULT_REPORT_MAX_BYTES, minimum=1)


DEFAULT_MAX_IMAGE_PIXELS = 40_000_000  # 40 megapixels: a 7,300 x 5,500 figure; ~160 MB decoded as RGBA
# TVIR's and MMDR's reports show a handful of figures (the releases' largest: a few dozen); 50 keeps
# every real report whole and bounds a hostile one at ~150 vision calls.
DEFAULT_MAX_FIGURES_PER_REPORT = 50


def max_image_pixels() -> int:
    """DREVAL_MAX_IMAGE_PIXELS: the largest image (width x height) decoded; a larger one is refused from
    its header, before any pixel is decoded (Pillow's own bomb limit, ~179 megapixels, costs ~3 GB)."""
    return env_int("DREVAL_MAX_IMAGE_PIXELS", DEFAULT_MAX_IMAGE_PIXELS, minimum=1)


def max_figures_per_report() -> int:
    """DREVAL_MAX_FIGURES_PER_REPORT: the figures of one report a vision judge is asked about; the
    rest are N/A, our limit, saying so (each figure costs one to three vision calls)."""
    return env_int("DREVAL_MAX_FIGURES_PER_REPORT", DEFAULT_MAX_FIGURES_PER_REPORT, minimum=1)


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "")
    if value == "":
        return default
    try:
        return float(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a number") from exc


DUCKDB_MEMORY_ENV = "DREVAL_DUCKDB_MEMORY"
DEFAULT_DUCKDB_MEMORY = "128MB"
_MEMORY = re.compile(r"\d+(\.\d+)?\s*(b|kb|mb|gb|tb|kib|mib|gib|tib)", re.IGNORECASE)


def duckdb_memory() -> str:
    """DREVAL_DUCKDB_MEMORY: what DuckDB may hold in memory per database file (its `memory_limit`, e.g.
    `128MB`, `2GB`); beyond it, it writes to disk. DuckDB's own default is 80 % of the machine's memory,
    which a run's copies of the database (publishing, compaction) would fill for speed they barely need."""
    value = os.environ.get(DUCKDB_MEMORY_ENV, "").strip() or DEFAULT_DUCKDB_MEMORY
    if not _MEMORY.fullmatch(value):
        raise ConfigError(f"{DUCKDB_MEMORY_ENV}={value!r}: a size such as 512MB or 2GB")
    return value
