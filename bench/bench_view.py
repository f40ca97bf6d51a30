"""Speed of `dreval view` on the demo: each kind of page rendered from the published copy, and the
whole static export.

    python bench/bench_view.py [--home HOME]

Without --home it builds the demo in a temporary home first. Prints, per page kind, the best of 5
renders (a fresh read-only connection each, as the server does per request), then the export's file
count and wall time (one connection for all pages; the plots drawn once).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import best_of  # noqa: E402

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.presentation.view.export import export  # noqa: E402
from dreval_assets.presentation.view.pages import Site  # noqa: E402

PAGES = {"leaderboard (plots cached)": "index.html", "system heatmap": "systems/loose-cannon.html",
         "system x task report": "reports/loose-cannon/dr3.dr3-en-004.html",
         "report with figures": "reports/careful-scholar/tvir.100001.html",
         "comparison": "compare/dr3.dr3-en-004/careful-scholar/loose-cannon.html"}


def run(home: Path) -> None:
    site = Site(home / "results.duckdb")
    site.page("index.html")  # draws the plots once; templates compiled
    for name, path in PAGES.items():
        print(f"{name:28s} {best_of(5, lambda: site.page(path)) * 1000:7.1f} ms  ({path})")
    with tempfile.TemporaryDirectory() as folder:
        fresh = Site(home / "results.duckdb")
        started = time.perf_counter()
        written = export(fresh, Path(folder))
        print(f"export: {written} files in {time.perf_counter() - started:.2f} s (plots drawn included)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--home")
    args = parser.parse_args()
    if args.home:
        run(Path(args.home))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp) / "home"
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(["--home", str(home), "demo"]) == 0
            run(home)
