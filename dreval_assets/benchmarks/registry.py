"""The benchmarks the pipeline knows: the only module that names them. Stages, the CLI and the judges
ask it; `register` adds one at run time (a plugin, or a test's toy benchmark). It declares each
benchmark's policies to `policies`, which the benchmark folders import and so cannot ask it."""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Iterable, Mapping

from ..judges.base import Judge
from ..judges.prompts import add_prompt_dir
from ..judges.temperature import with_temperature
from . import core, dr3, drb, miroeval, mmdr, tvir, wlc
from .policies import declare as declare_policies
from .protocol import Benchmark
from .rubric import Rubric
from .suite import Suite

BENCHMARKS: dict[str, Benchmark] = {b.name: b for b in (
    core.BENCHMARK, tvir.BENCHMARK, mmdr.BENCHMARK, dr3.BENCHMARK, wlc.BENCHMARK, drb.BENCHMARK,
    miroeval.BENCHMARK)}
SUITES: dict[str, Suite] = {name: b.suite for name, b in BENCHMARKS.items()}
for _benchmark in BENCHMARKS.values():
    declare_policies(_benchmark.name, _benchmark.policies)


def register(benchmark: Benchmark) -> None:
    """Add a benchmark (or replace one of the same name) for this process."""
    BENCHMARKS[benchmark.name] = benchmark
    SUITES[benchmark.name] = benchmark.suite
    declare_policies(benchmark.name, benchmark.policies)
    if benchmark.prompts_dir is not None:
        add_prompt_dir(benchmark.prompts_dir)


def loader(name: str) -> ModuleType | None:
    """The release loader module of a benchmark, or None when it publishes no release layout."""
    benchmark = BENCHMARKS.get(name)
    return importlib.import_module(benchmark.loader) if benchmark and benchmark.loader else None


def with_releases() -> list[str]:
    return [name for name, b in BENCHMARKS.items() if b.loader]


def rubrics_for(suite_names: set[str]) -> list[Rubric]:
    """The fixed rubrics of the given suites, in registry order."""
    return [r for b in BENCHMARKS.values() if b.name in suite_names for r in b.rubrics]


def all_rubrics() -> list[Rubric]:
    return [r for b in BENCHMARKS.values() for r in b.rubrics]


def judge_temperature(benchmark: str) -> float | None:
    """The temperature a benchmark's published judge samples at (None: not a registered benchmark)."""
    found = BENCHMARKS.get(benchmark)
    return found.judge_temperature if found else None


def task_temperatures(task_rows: Iterable[Mapping]) -> dict[str, float | None]:
    """task -> the temperature of its benchmark's judge."""
    return {r["task"]: judge_temperature(r.get("benchmark") or "") for r in task_rows}


def judge_for(judge: Judge, benchmark: str) -> Judge:
    """`judge` asking at `benchmark`'s published temperature (its own judgments)."""
    return with_temperature(judge, judge_temperature(benchmark))


def judge_for_tasks(judge: Judge, task_rows: Iterable[Mapping]) -> Judge:
    """`judge` asking each request at its task's benchmark's temperature (shared judgments)."""
    return with_temperature(judge, by_task=task_temperatures(task_rows))


def claim_verdict_templates(benchmark: str) -> tuple[str, str] | None:
    """A benchmark's own claim-verdict templates (single, batch), or None for the shared ones."""
    found = BENCHMARKS.get(benchmark)
    return found.claim_verdict_templates if found else None
