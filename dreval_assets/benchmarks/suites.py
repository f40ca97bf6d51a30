"""The suites by name, and which ones score a task."""
from __future__ import annotations

import hashlib
import inspect
from pathlib import Path
from typing import Sequence

from ..errors import ConfigError
from .registry import BENCHMARKS, SUITES
from .suite import Suite


def needs_sandbox_evidence(suite_names: set[str]) -> bool:
    """Whether any of these suites checks statements against the task's sandbox beyond their citations."""
    return any(BENCHMARKS[n].needs_sandbox_evidence for n in suite_names if n in BENCHMARKS)


def suite_names(benchmark: str, extra: Sequence[str] = ()) -> set[str]:
    return {s.name for s in suites_for(benchmark, extra)}


def suites_for(benchmark: str, extra: Sequence[str] = ()) -> list[Suite]:
    """`core`, the task's own benchmark suite, then any extra suites the user asked for."""
    names = ["core"] + ([benchmark] if benchmark in SUITES else []) + list(extra)
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise ConfigError(f"unknown suite(s) {unknown}; known: {', '.join(SUITES)}")
    return [SUITES[n] for n in dict.fromkeys(names)]


def scoring_version() -> str:
    """A short hash of the code that turns evidence into metric rows: every registered suite's module,
    the suite and composite machinery and the evidence it reads. Part of `metric_scores`' shaping
    settings, so a changed formula re-scores every partition (from stored verdicts, at no judge cost)
    instead of leaving rows made by the old formula under the new meaning."""
    here = Path(__file__).parent
    files = {here / "suite.py", here / "evidence.py", here / "aggregation.py", here.parent / "core" / "metrics.py"}
    for suite in SUITES.values():  # the suite's whole folder: its formulas live beside `compute`
        files |= set(Path(inspect.getsourcefile(suite.compute)).parent.glob("*.py"))
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path.parent.name}/{path.name}".encode() + path.read_bytes())
    return "scoring-" + digest.hexdigest()[:12]
