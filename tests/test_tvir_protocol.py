"""TVIR as published, end to end on a release in the published shape (formats.md: `<figure><img>
<figcaption>` figures, some image files missing) with an OpenAI-compatible judge whose prompts are
captured: IA, WQ, ADB, FLC and MC read the corrected report (no trace of a missing figure, captions as
revised), IA and the rubrics are shown the query, WQ and ADB their full rubrics, MC the variety bands;
each judgment is asked in three runs with their own cache keys and the rows average them; a second
run asks nothing."""
import json
import tempfile
from pathlib import Path

import polars as pl
import pytest

from dreval_assets.benchmarks.judging import FigureImage, JudgmentContext
from dreval_assets.benchmarks.tvir.judgments import merge_runs, tvir_judgments
from dreval_assets.benchmarks.tvir.visual_text import corrected_report
from dreval_assets.cli import main
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.stages.frames import frame
from dreval_assets.store.db import Store
from loopback_llm import message_text
from task_frames import tasks_table
from test_tvir_visual import chart_png, photo_png

SYSTEM, TASK = "web-agent", "tvir.100001"
QUERY = "Write an illustrated report on how battery storage grew in the Meridian grid since 2020."
CHECKLIST_ITEMS = {"Growth": ["Gives installed storage power by year", "Shows an architecture diagram of a plant"],
                   "Visuals": ["Includes a chart of installed power"]}
REPORT = """# Storage in the Meridian grid

## Growth
Battery power grew fast, as the chart below shows <a href="#ref1">[1]</a>.

<figure><img src="charts/growth.png"><figcaption>Installed power [1]</figcaption></figure>

## Plants
<figure><img src="images/architecture.png"><figcaption>Architecture diagram of the Kestrel plant</figcaption></figure>

Figure 3: Control room of the Kestrel plant
![control](images/control.png)

![Battery enclosures at Kestrel Ridge](images/site.png)

<a id="ref1"></a> [1] Meridian storage statistics https://grid.example/storage
"""
# the missing figures (architecture.png, control.png): their files, captions and markup
MISSING_TRACES = ("architecture.png", "Architecture diagram", "control.png", "Control room", "Figure 3", "control]")
CHECKLIST = "You check a research report against the requirements a user set for it, in the light of"
COMPOSITION = "You judge how a research report composes its text and its figures."
WRITING = "You grade the writing quality of a research report"
DEPTH = "You grade the analytical depth and breadth of a research report"
CONTRADICTIONS = "You look for internal contradictions in a research report."


def write_release(root: Path) -> Path:
    """A TVIR release in the published layout: two figures whose files exist, two whose files do not."""
    (root / "benchmark/data").mkdir(parents=True)
    (root / "benchmark/data/query.json").write_text(json.dumps(
        [{"id": "100001", "query": QUERY, "checklist": CHECKLIST_ITEMS}]), encoding="utf-8")
    folder = root / f"benchmark/reports/{SYSTEM}/100001"
    (folder / "charts").mkdir(parents=True)
    (folder / "images").mkdir()
    (folder / "report.md").write_text(REPORT, encoding="utf-8")
    (folder / "charts/growth.png").write_bytes(chart_png())
    (folder / "images/site.png").write_bytes(photo_png())
    return root


def prompts_of(llm, opening: str) -> list[str]:
    return [text for request in llm.requests for message in request.get("messages", [])
            if opening in (text := message_text(message.get("content")))]


def report_block(prompt: str) -> str:
    return prompt.split("<<<REPORT\n", 1)[1].rsplit("\nREPORT>>>", 1)[0]


@pytest.fixture(scope="module")
def run():
    from judge_answers import dreval_answer
    from loopback_llm import LoopbackLLM

    with pytest.MonkeyPatch.context() as env, LoopbackLLM(answer=dreval_answer) as llm:
        root = Path(tempfile.mkdtemp())
        release, home = write_release(root / "release"), root / "home"
        env.setenv("DREVAL_JUDGE", "openai")
        env.setenv("DREVAL_JUDGE_MODEL", "loopback-model")
        env.setenv("OPENAI_BASE_URL", llm.base_url)
        env.setenv("OPENAI_API_KEY", "k")
        assert main(["--home", str(home), "import", "tvir", str(release)]) == 0
        assert main(["--home", str(home), "run", "--system", SYSTEM]) == 0
        first = len(llm.requests)
        assert main(["--home", str(home), "run", "--system", SYSTEM]) == 0
        yield llm, Store(home / "dreval.duckdb"), first


def test_the_release_has_valid_and_missing_figures(run):
    _, store, _ = run
    found = store.query(f"SELECT src, status FROM report_images WHERE task = '{TASK}' ORDER BY figure")
    assert found.rows() == [("charts/growth.png", "ok"), ("images/architecture.png", "invalid"),
                            ("images/control.png", "invalid"), ("images/site.png", "ok")]


def test_checklist_prompt_carries_the_query_and_no_trace_of_missing_figures(run):
    llm, _, _ = run
    prompts = prompts_of(llm, CHECKLIST)
    assert len(prompts) == 3  # one chunk, three runs
    for prompt in prompts:
        assert f"The request the report answers:\n{QUERY}\n" in prompt
        report = report_block(prompt)
        assert not [t for t in MISSING_TRACES if t in report], report
        assert "<img" not in report and "<figure" not in report and "figcaption" not in report and "](" not in report
        # the valid figures stand as placeholders, the short caption as the judge revised it
        assert "[Figure 1 (chart): Installed power (values and units as shown, from the cited source)]" in report
        assert "[Figure 2 (photo): Battery enclosures at Kestrel Ridge (values and units as shown" in report
        assert "Battery power grew fast, as the chart below shows" in report  # the prose is kept


def test_mc_prompt_has_no_caption_of_a_missing_figure_and_the_variety_bands(run):
    llm, _, _ = run
    prompts = prompts_of(llm, COMPOSITION)
    assert len(prompts) == 3
    for prompt in prompts:
        report = report_block(prompt)
        assert not [t for t in MISSING_TRACES if t in report], report
        assert "[Figure 1 (chart): Installed power (values and units as shown, from the cited source)]" in report
        assert "The report has 2 figure(s)." in prompt
        assert "Score variety by these fixed bands" in prompt and "- 9-10: a deliberate, rich mix" in prompt


def test_wq_adb_flc_read_the_corrected_report_wq_adb_with_the_query_and_full_rubrics(run):
    llm, _, _ = run
    for opening, ids in ((WRITING, ("coherence", "clarity", "conciseness", "consistency")),
                         (DEPTH, ("causal", "depth", "critical", "forward", "breadth"))):
        prompts = prompts_of(llm, opening)
        assert len(prompts) == 3
        for prompt in prompts:
            assert f"The request the report answers:\n{QUERY}\n" in prompt
            assert all(f"[{i}]" in prompt for i in ids) and prompt.count("- 9-10:") == len(ids)
            assert not [t for t in MISSING_TRACES if t in report_block(prompt)]
    flc = prompts_of(llm, CONTRADICTIONS)
    assert len(flc) == 3 and not [t for p in flc for t in MISSING_TRACES if t in report_block(p)]


def test_three_runs_each_its_own_cache_key_rows_averaging_them_and_a_rerun_asks_nothing(run):
    llm, store, first = run
    assert len(llm.requests) == first  # the second run: every answer from the cache
    rows = store.query(f"SELECT kind, item_id, credit, score, reason, cache_key FROM report_judgments "
                       f"WHERE system = '{SYSTEM}' AND task = '{TASK}'")
    items = rows.filter(pl.col("kind") == "checklist")
    assert items.height == 3 and all(r.startswith("mean of 3 of 3 runs") for r in items["reason"])
    for prefix in ("tvir.wq.", "tvir_visual.mc.", "tvir_visual.fcq.f01."):
        judged = rows.filter(pl.col("item_id").str.starts_with(prefix))
        assert judged.height and all(r.startswith("mean of 3 of 3 runs") for r in judged["reason"]), prefix
    for template in ("tvir/writing_quality", "tvir/checklist_items", "tvir/composition", "tvir/caption_quality"):
        cached = store.query(f"SELECT count(*) AS n FROM judge_cache WHERE template = '{template}'")
        assert cached["n"][0] == 3 * (2 if template == "tvir/caption_quality" else 1), template  # a key per run


# --- the pieces, without the CLI ---------------------------------------------------------------------

def figure(index, src, caption, status="ok", kind="chart"):
    return FigureImage("s", "t", index, src, caption, "", (), "", kind, status,
                       "" if status == "ok" else "missing file")


def test_corrected_report_takes_out_figure_elements_caption_lines_and_pseudo_visuals():
    report = ("# Plants\n\nIntro with an inline ![icon](images/icon.png) in prose.\n\n"
              "<figure><img src='images/gone.png'><figcaption>图2 运营商份额</figcaption></figure>\n\n"
              "Figure 3: Plant layout\n![layout](images/layout.png)\n\n"
              "<figure><img src=\"images/kept.png\"><figcaption>Output by year</figcaption></figure>\n\n"
              "```\n+----+    +----+\n| A  |--->| B  |\n+----+    +----+\n```\n\nEnd of text.\n")
    figures = [figure(0, "images/icon.png", "icon", "invalid"), figure(1, "images/gone.png", "图2 运营商份额", "invalid"),
               figure(2, "images/layout.png", "Figure 3: Plant layout", "invalid"),
               figure(3, "images/kept.png", "Output by year"),
               figure(4, "", "", "invalid", "diagram")]  # the ASCII drawing (report_images lists it last)
    text = corrected_report(report, figures, {3: "Plant output by year, 2019-2023"})
    assert "Intro with an inline  in prose." in text and "End of text." in text
    for trace in ("icon.png", "gone.png", "运营商份额", "figcaption", "layout", "Figure 3", "+----+", "```"):
        assert trace not in text, trace
    assert "[Figure 1 (chart): Plant output by year, 2019-2023]" in text and "Output by year" not in text


def test_merge_runs_averages_answered_runs_and_says_how_many():
    base = {"system": "s", "task": "t", "template": "tvir/checklist_items", "na_reason": None, "score": None}
    run = [
        [{**base, "kind": "checklist", "item_id": "i01", "credit": 1.0, "reason": "met"}],
        [{**base, "kind": "checklist", "item_id": "i01", "credit": 0.5, "reason": "thin"}],
        [{**base, "kind": "checklist", "item_id": "i01", "credit": None, "reason": "timeout",
          "na_reason": "provider_failure"}],
    ]
    merged = merge_runs(run)
    assert merged[0]["credit"] == pytest.approx(0.75) and merged[0]["na_reason"] is None
    assert merged[0]["reason"].startswith("mean of 2 of 3 runs (1, 0.5): met")
    failed = merge_runs([[{**r[0], "credit": None, "na_reason": "provider_failure"}] for r in run])
    assert failed[0]["credit"] is None and failed[0]["reason"].startswith("no run of 3 answered")


def test_runs_policy_one_asks_once_and_each_run_has_its_own_cache_key(llm, calls):
    judge = OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                        calls)
    report = "# Ferries\n\nPassenger numbers rose to 41,200 in 2023 [1].\n\n## References\n[1] Note https://x.example/a\n"
    reports = frame("reports", [{"system": "s", "task": "t", "status": "ok", "text": report, "n_chars": len(report),
                                 "content_hash": "x", "source_path": None, "na_reason": None, "detail": ""}])

    def ctx(runs):
        return JudgmentContext([("s", "t")], reports, tasks_table(benchmark="tvir", query="Ferry demand?"),
                               frame("task_rubrics", []), judge, policies={"tvir.judge_runs": runs})

    once = tvir_judgments(ctx("1"))
    assert llm.n_calls == 3  # WQ, ADB, FLC
    thrice = tvir_judgments(ctx("3"))
    assert llm.n_calls == 3 + 6  # run 1 from the cache (its key unchanged), runs 2 and 3 asked
    keys = {r["item_id"]: r["cache_key"] for r in once.iter_rows(named=True)}
    assert {r["item_id"]: r["cache_key"] for r in thrice.iter_rows(named=True)} == keys  # the first run's key shown
    assert all(r.startswith("mean of 3 of 3 runs") for r in thrice["reason"])
    assert all(not r.startswith("mean of") for r in once["reason"])


def test_a_mean_credit_over_runs_passes_the_credit_check_and_one_outside_zero_one_does_not():
    from dreval_assets.stages.checks import invalid_credits

    rows = frame("report_judgments", [
        {"system": "s", "task": "t", "kind": "checklist", "item_id": f"i0{n}", "item": "x", "credit": credit,
         "score": None, "reason": "", "na_reason": None, "judge": "j", "template": "tvir/checklist_items",
         "template_hash": "h", "cache_key": None} for n, credit in enumerate((0.75, 1.0, 1.5, -0.5))])
    assert invalid_credits(rows)["credit"].to_list() == [1.5, -0.5]
