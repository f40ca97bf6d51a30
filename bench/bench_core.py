"""Throughput of the Dagster-free core on the demo: parser and heuristic judge.

    python bench/bench_core.py

Reports per-report parse time, per-verdict judge time, and the judge on one very large page
(50,000 words), where passage selection dominates.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import best_of  # noqa: E402
from dreval_assets.releases.generic import load_generic  # noqa: E402
from dreval_assets.core.evidence_match import match_claim  # noqa: E402
from dreval_assets.core.report_parser import parse_report  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"


def main() -> None:
    reports = [p.read_text() for p in sorted((DEMO / "systems").glob("*/*.md"))]
    parse_s = best_of(5, lambda: [parse_report(r) for r in reports])
    print(f"parser: {len(reports)} demo reports in {parse_s * 1000:.1f} ms "
          f"= {parse_s / len(reports) * 1000:.2f} ms per report")

    tasks = {t.original_id: t for t in load_generic(DEMO).tasks}
    pairs = []
    for path in sorted((DEMO / "systems").glob("*/*.md")):
        task = tasks[path.stem]
        pages = {p.url: p.text for p in task.sandbox}
        for claim in parse_report(path.read_text()).claims:
            pairs.extend((claim.text, pages[u]) for u in claim.urls if u in pages)
    judge_s = best_of(3, lambda: [match_claim(c, p) for c, p in pairs])
    print(f"heuristic judge: {len(pairs)} claim x page pairs in {judge_s * 1000:.0f} ms "
          f"= {judge_s / len(pairs) * 1000:.2f} ms per verdict")

    page = " ".join(p.text for t in tasks.values() for p in t.sandbox)
    big = " ".join([page] * (50_000 // len(page.split()) + 1))
    claim = pairs[0][0]
    big_s = best_of(3, lambda: match_claim(claim, big))
    print(f"heuristic judge on a {len(big.split()):,}-word page: {big_s * 1000:.1f} ms per verdict "
          f"({big_s / (judge_s / len(pairs)):.0f}x a demo page)")


if __name__ == "__main__":
    main()
