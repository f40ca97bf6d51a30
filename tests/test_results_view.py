"""`dreval view` on the demo, as a user meets it: the leaderboard's ranks agree with its numbers as
systems are added (one covering every task, one covering 2 of 8), and the pages, served on loopback and
exported as files, are driven in a real headless chromium (tests/browser.py)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from browser import browser_page  # noqa: E402

from dreval_assets.benchmarks.suites import SUITES  # noqa: E402
from dreval_assets.cli import main  # noqa: E402
from dreval_assets.defs.runner import demo_root  # noqa: E402
from dreval_assets.presentation.leaderboard_view import leaderboard_tables, wide_leaderboard  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402

SCRIPT = "<script>window.__dreval_pwned = 1; document.title = 'pwned';</script>"
STAGES = ("demo", "with steady-analyst", "with a partial system")


def board(home: Path) -> pl.DataFrame:
    return Store(home / "results.duckdb").query("SELECT * FROM leaderboard", read_only=True)


def ranked_by(home: Path) -> dict[tuple[str, str], str | None]:
    return {(t.suite, t.judge): t.ranked_by for t in leaderboard_tables(board(home))}


@pytest.fixture(scope="module")
def view_home(tmp_path_factory) -> dict:
    """The demo, then steady-analyst (every task), then `partial` (2 of 8 tasks) and `script-kiddie`
    (one report holding a script): each stage's leaderboard kept to compare."""
    root = tmp_path_factory.mktemp("view")
    home = root / "home"
    boards = {}
    assert main(["--home", str(home), "demo"]) == 0
    boards[STAGES[0]] = board(home)
    extra = demo_root() / "extra_systems" / "steady-analyst"
    assert main(["--home", str(home), "add-system", "steady-analyst", "--reports", str(extra)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    boards[STAGES[1]] = board(home)
    partial = root / "partial"
    partial.mkdir()
    for name in ("37.md", "Q7.md"):  # a MiroEval and an MMDR task
        shutil.copy(extra / name, partial / name)
    hostile = root / "script-kiddie"
    hostile.mkdir()
    loose = (demo_root() / "systems" / "loose-cannon" / "dr3-en-004.md").read_text()
    (hostile / "dr3-en-004.md").write_text(loose.replace("\n\n", f"\n\n{SCRIPT}\n\n", 1))
    assert main(["--home", str(home), "add-system", "partial", "--reports", str(partial)]) == 0
    assert main(["--home", str(home), "add-system", "script-kiddie", "--reports", str(hostile)]) == 0
    assert main(["--home", str(home), "run"]) == 0
    boards[STAGES[2]] = board(home)
    return {"home": home, "boards": boards, "root": root}


def screenshot_dir(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("DREVAL_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# -- ranks agree with the numbers


def test_a_suites_ranking_metric_is_its_headline_whatever_systems_are_added(view_home):
    seen = {stage: {(t.suite, t.judge): t.ranked_by for t in leaderboard_tables(b)}
            for stage, b in view_home["boards"].items()}
    first = seen[STAGES[0]]
    assert set(s for s, _ in first) == {"core", "tvir", "mmdr", "dr3", "wlc", "drb", "miroeval"}
    for stage in STAGES[1:]:
        assert seen[stage] == first, stage
    assert all(column == f"{suite}.{SUITES[suite].headline[0]}" for (suite, _), column in first.items())


def test_ranks_agree_with_the_numbers_shown_at_every_stage(view_home):
    for stage, stage_board in view_home["boards"].items():
        for table in leaderboard_tables(stage_board):
            rows = table.rows.filter(pl.col("column") == table.ranked_by)
            ranked = rows.filter(pl.col("rank").is_not_null()).sort("rank")
            better = SUITES[table.suite].spec(table.ranked_by.split(".", 1)[1]).better
            means = ranked.get_column("mean").to_list()
            assert means == sorted(means, reverse=better > 0), (stage, table.suite, ranked.select("system", "rank", "mean"))
            # the rank follows the mean: equal means share a rank, a better mean never ranks below a worse one
            assert all((a < b) == (ma != mb) for (a, ma), (b, mb) in zip(
                ranked.select("rank", "mean").rows(), ranked.select("rank", "mean").rows()[1:])), (stage, table.suite)
            assert all(note == "" for note in ranked.get_column("coverage_note").fill_null("")), (stage, table.suite)
            order = wide_leaderboard(table).get_column("system").to_list()
            assert order[:ranked.height] == ranked.get_column("system").to_list(), (stage, table.suite)


def test_a_system_covering_2_of_8_tasks_is_listed_with_its_coverage_and_no_rank(view_home):
    final = view_home["boards"][STAGES[2]]
    core, = [t for t in leaderboard_tables(final, "core")]
    partial = core.rows.filter((pl.col("system") == "partial") & (pl.col("column") == core.ranked_by)).row(0, named=True)
    assert (partial["n_scored"], partial["n_tasks"], partial["rank"]) == (2, 8, None)
    assert partial["coverage_note"].startswith("scored on 2 of the 8 tasks") and "not ranked" in partial["coverage_note"]
    before = {r["system"]: r["rank"] for r in view_home["boards"][STAGES[1]].filter(
        (pl.col("suite") == "core") & (pl.col("metric") == "supported_ratio") & (pl.col("breakdown") == "")).iter_rows(named=True)}
    after = {r["system"]: r["rank"] for r in final.filter(
        (pl.col("suite") == "core") & (pl.col("metric") == "supported_ratio") & (pl.col("breakdown") == "")).iter_rows(named=True)}
    assert {s: r for s, r in after.items() if s in before} == before  # adding it re-ranked nobody
    assert before["careful-scholar"] == 1 and before["steady-analyst"] == 2


# -- the pages in a browser


@pytest.fixture(scope="module")
def server(view_home):
    """`dreval view` in a subprocess on a free loopback port; its URL as it prints it."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "-m", "dreval_assets.cli", "--home", str(view_home["home"]), "view",
                                "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = process.stdout.readline()
        assert line.startswith("dreval view: serving http://127.0.0.1:"), (line, process.stderr.read()
                                                                           if process.poll() is not None else "")
        yield line.split()[3]
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_leaderboard_page_loads_with_ranks_intervals_and_plots(server, tmp_path):
    with browser_page() as page:
        response = page.goto(server)
        assert response.status == 200
        assert page.locator("h1").inner_text() == "Leaderboard"
        core = page.locator("#suite-core")
        assert "ranked by core.supported_ratio" in core.locator("h2").inner_text()
        first = core.locator("tbody tr").first.locator("td")
        assert first.nth(0).inner_text() == "1" and first.nth(1).inner_text() == "careful-scholar"
        assert "[" in first.nth(2).inner_text() and "(8/8)" in first.nth(2).inner_text()  # headline [CI] (coverage)
        partial = core.locator("tbody tr", has_text="partial")
        assert partial.locator("td").first.inner_text() == "—" and "(2/8)" in partial.inner_text()
        plots = page.locator("section.plots img")
        assert plots.count() == 3
        assert all(plots.nth(i).evaluate("img => img.naturalWidth") > 0 for i in range(3))
        page.screenshot(path=str(screenshot_dir(tmp_path) / "view_leaderboard.png"), full_page=True)


def test_a_changed_number_shows_contradicted_with_the_sandbox_passage_beside_it(server, tmp_path):
    with browser_page() as page:
        page.goto(f"{server}reports/loose-cannon/dr3.dr3-en-004.html")
        claim = page.locator("a.claim", has_text="68 percent of the eligible school population")
        assert "v-contradicted" in claim.get_attribute("class")
        claim.click()
        card = page.locator(".card:target")
        assert card.count() == 1 and card.is_visible()
        text = card.inner_text()
        assert "contradicted" in text and "page from the sandbox" in text
        assert "63 percent of the eligible school population" in card.locator("blockquote.passage").inner_text()
        assert "'63 percent' where the claim says '68 percent'" in text  # the judge's reason
        assert "template claim_verdicts_batch" in text
        box_claim, box_card = claim.bounding_box(), card.bounding_box()
        assert box_card["x"] > box_claim["x"] + box_claim["width"] / 2  # beside the report, not below it
        assert page.locator("#metric-core\\.contradicted_ratio").count() == 1  # every metric row of the partition
        page.screenshot(path=str(screenshot_dir(tmp_path) / "view_contradicted_claim.png"))


def test_a_report_holding_a_script_shows_it_as_text_and_never_runs_it(server, tmp_path):
    with browser_page() as page:
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{server}reports/script-kiddie/dr3.dr3-en-004.html")
        assert SCRIPT in page.locator(".report-text").inner_text()
        assert page.evaluate("() => window.__dreval_pwned") is None and page.title() != "pwned" and not dialogs
        assert page.locator(".report-text script").count() == 0
        page.goto(f"{server}compare/dr3.dr3-en-004/loose-cannon/script-kiddie.html")
        assert SCRIPT in page.locator(".side-by-side").inner_text()
        assert page.evaluate("() => window.__dreval_pwned") is None
        page.screenshot(path=str(screenshot_dir(tmp_path) / "view_script_as_text.png"))


def test_a_system_page_links_each_metric_and_task_to_its_partition(server, tmp_path):
    with browser_page() as page:
        page.goto(f"{server}systems/loose-cannon.html")
        cell = page.locator("#suite-dr3 ~ div table.heatmap").first.locator("td.heat a").first
        cell.click()
        assert "/reports/loose-cannon/dr3." in page.url and "#metric-dr3." in page.url
        assert page.locator("tr:target").count() == 1
        page.goto(f"{server}systems/loose-cannon.html")
        page.screenshot(path=str(screenshot_dir(tmp_path) / "view_system.png"), full_page=True)
        assert page.goto(f"{server}reports/no-such/dr3.x.html").status == 404


def test_the_export_opens_from_the_file_system_with_no_server(view_home, tmp_path):
    folder = view_home["root"] / "export"
    assert main(["--home", str(view_home["home"]), "view", "--export", str(folder)]) == 0
    with browser_page() as page:
        requests = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto((folder / "index.html").as_uri())
        assert page.locator("h1").inner_text() == "Leaderboard"
        page.locator("#suite-core a", has_text="careful-scholar").first.click()
        assert page.url.endswith("/systems/careful-scholar.html")
        page.locator("table.heatmap th a", has_text="tvir.100001").first.click()
        assert page.url.endswith("/reports/careful-scholar/tvir.100001.html")
        figures = page.locator("section.figures img")
        assert figures.count() >= 1 and figures.first.evaluate("img => img.naturalWidth") > 0
        assert "sharpness" in page.locator("section.figures").inner_text()
        page.screenshot(path=str(screenshot_dir(tmp_path) / "view_export_report.png"))
        assert requests and all(url.startswith("file://") for url in requests)  # nothing from the network


def test_pages_escape_every_text_allow_no_script_and_serve_nothing_outside_their_paths(view_home):
    from dreval_assets.presentation.view.pages import Site

    site = Site(view_home["home"] / "results.duckdb")
    html = site.page("reports/script-kiddie/dr3.dr3-en-004.html").body.decode()
    assert "&lt;script&gt;window.__dreval_pwned" in html and "<script" not in html.lower()
    assert "script-src 'none'" in html and "default-src 'none'" in html
    for path in ("reports/../../etc/passwd", "reports/loose-cannon/../../index.html", "images/../index.html",
                 "systems/Loose Cannon.html", "compare/dr3.dr3-en-004/loose-cannon/loose-cannon/x.html"):
        assert site.page(path) is None, path
