"""The suites by name, and which ones score a task."""
from __future__ import annotations

from typing import Sequence

from ..errors import ConfigError
from . import core_suite, dr3, drb, miroeval, mmdr, tvir, wlc
from .suite import Suite

SUITES: dict[str, Suite] = {s.name: s for s in (core_suite.SUITE, tvir.SUITE, mmdr.SUITE, dr3.SUITE, wlc.SUITE,
                                                drb.SUITE, miroeval.SUITE)}
# Suites that look for evidence beyond the cited pages (the task's sandbox) for their statements.
NEEDS_SANDBOX_EVIDENCE = frozenset({"miroeval"})


def suite_names(benchmark: str, extra: Sequence[str] = ()) -> set[str]:
    return {s.name for s in suites_for(benchmark, extra)}


def suites_for(benchmark: str, extra: Sequence[str] = ()) -> list[Suite]:
    """`core`, the task's own benchmark suite, then any extra suites the user asked for."""
    names = ["core"] + ([benchmark] if benchmark in SUITES else []) + list(extra)
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise ConfigError(f"unknown suite(s) {unknown}; known: {', '.join(SUITES)}")
    return [SUITES[n] for n in dict.fromkeys(names)]
