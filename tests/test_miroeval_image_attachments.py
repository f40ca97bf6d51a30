"""MiroEval image attachments (issue 16 §4): carried with the task, read into key facts by one vision
call per attachment (cached, shared by every system), shown to Grounding, and evidence for CONFLICT;
offline they are N/A model_failure and Grounding says it worked without them."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SourceVerdict
from dreval_assets.benchmarks.miroeval.artifacts import evidence_inputs
from dreval_assets.benchmarks.miroeval.judgments import IMAGE_KEY_FACTS_TEMPLATE, judge_synthesis, task_key_facts
from dreval_assets.benchmarks.miroeval.metrics import label, synthesis_metrics
from dreval_assets.core.images import content_hash
from dreval_assets.fetch.factory import make_fetcher
from dreval_assets.fetch.sandbox import SandboxFetcher
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.openai_judge import OpenAIJudge
from dreval_assets.releases import generic_layout
from dreval_assets.core.images import from_data_url
from dreval_assets.releases.generic import load_generic
from dreval_assets.releases.records import ImportLog
from dreval_assets.stages.attachment_images import image_fact_pages, with_image_attachments, with_image_facts
from dreval_assets.stages.fetch import fetch_references
from dreval_assets.stages.frames import frame
from dreval_assets.stages.parse import parse_reports
from dreval_assets.stages.task_rubrics import generate_rubrics
from dreval_assets.stages.tasks import attachments_by_task, sandbox_pages, task_frames
from dreval_assets.stages.verdicts import judge_claims

from answers_miroeval_images import PROMPT
from loopback_llm import message_text

DEMO = Path(__file__).resolve().parents[1] / "dreval_assets" / "demo"
CHART = "attachments/37-plant-capacities.png"
SYSTEMS = ("careful-scholar", "loose-cannon", "quiet-summarizer")


@pytest.fixture(scope="module")
def task37():
    return next(t for t in generic_layout.iter_tasks(DEMO, ImportLog()) if t.original_id == "37")


@pytest.fixture
def judge(llm, calls):
    return OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5),
                       calls)


def _frames(task):
    frames = task_frames([task])
    texts = {r["text_hash"]: r["text"] for r in frames["page_texts"].iter_rows(named=True)}
    return frames, texts


def rubrics_for(task, judge):
    frames, texts = _frames(task)
    attachments = with_image_attachments(attachments_by_task(frames["task_sandbox"], texts), [task])
    return generate_rubrics(frames["tasks"], attachments, judge)


def key_facts_rows(rubrics):
    return {r["template"]: r for r in rubrics.filter(rubrics["kind"] == "key_facts").iter_rows(named=True)}


def image_requests(llm):
    return [r for r in llm.requests if any(PROMPT in message_text(m.get("content")) for m in r["messages"])]


def reports_frame(task, systems=SYSTEMS, root=DEMO / "systems"):
    rows = []
    for system in systems:
        text = (root / system / "37.md").read_text(encoding="utf-8")
        rows.append({"system": system, "task": task.key, "status": "ok", "text": text, "n_chars": len(text),
                     "content_hash": content_hash(text.encode()), "source_path": "", "na_reason": None, "detail": "",
                     "trace": None})
    return frame("reports", rows)


def test_the_task_carries_its_image_judge_ready_and_its_document_as_text(task37):
    assert list(task37.attachment_texts) == ["attachments/37-ministry-brief.md"]
    data, mime = from_data_url(task37.attachment_images[CHART])
    assert mime == "image/png" and data == (DEMO / CHART).read_bytes()  # small enough to be sent as it is


def test_an_unreadable_image_attachment_is_noted_without_machine_details(tmp_path):
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "chart.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    (tmp_path / "tasks.jsonl").write_text(json.dumps(
        {"id": "t", "benchmark": "miroeval", "query": "Q?", "attachments": ["files/chart.png"]}) + "\n")
    loaded = load_generic(tmp_path)
    assert loaded.tasks[0].attachment_images == {}
    log = ImportLog()
    list(generic_layout.iter_tasks(tmp_path, log))
    (note,) = [str(n) for n in log.notes]
    assert "image attachment files/chart.png left out of the evidence (not a readable image" in note
    assert " at 0x" not in note


def test_offline_the_image_key_facts_are_na_and_grounding_says_it_worked_without_them(task37):
    rubrics = rubrics_for(task37, HeuristicJudge())
    rows = key_facts_rows(rubrics)
    image = rows[IMAGE_KEY_FACTS_TEMPLATE]
    assert image["rubric"] is None and image["na_reason"] == "pipeline_failure"  # the judge's limit, not the system's
    assert image["detail"] == (f"image attachment {CHART}: judge limit: the offline judge cannot see images: "
                               f"template '{IMAGE_KEY_FACTS_TEMPLATE}'")
    assert rows["miroeval/key_facts"]["na_reason"] is None  # the brief still has its facts
    assert image_fact_pages(rubrics) == {}  # no facts: the image is no evidence

    reports = reports_frame(task37, ("careful-scholar",))
    judged = judge_synthesis([("careful-scholar", task37.key)], reports, task_frames([task37])["tasks"], rubrics,
                             HeuristicJudge())
    grounding = judged.filter(judged["item_id"].str.starts_with("miroeval.grounding."))
    assert grounding.height and all(s is not None for s in grounding["score"])
    assert all("without the key facts of its image attachments" in r and CHART in r for r in grounding["reason"])

    inputs = evidence_inputs([{"task": task37.key}], rubrics, HeuristicJudge())[task37.key]
    scores = dict(zip(judged["item_id"], judged["score"]))
    metrics = {m.metric: m for m in synthesis_metrics(
        ReportEvidence("careful-scholar", task37.key, "miroeval", "heuristic", rubric_scores=scores, inputs=inputs))}
    assert metrics["grounding"].value is not None
    assert metrics["grounding"].detail.startswith("scored from the other attachments, without the key facts")
    assert "cannot see images" in metrics["grounding"].detail
    assert metrics["coverage"].detail == ""


def test_one_vision_call_per_image_attachment_cached_and_shared_by_every_system(task37, llm, judge):
    rubrics = rubrics_for(task37, judge)
    (request,) = image_requests(llm)
    (image,) = request["_images"]
    assert image["sha256"] == content_hash((DEMO / CHART).read_bytes()) and image["mime"] == "image/png"
    row = key_facts_rows(rubrics)[IMAGE_KEY_FACTS_TEMPLATE]
    artifact = json.loads(row["rubric"])
    assert row["na_reason"] is None and artifact["attachment"] == CHART and artifact["image"] == image["sha256"]
    punta = "Punta Velas is the largest plant, with a capacity of 220 thousand cubic metres per day."
    assert punta in artifact["facts"]
    facts = task_key_facts(rubrics)[task37.key]  # Grounding shows the brief's facts and the chart's
    assert any("41 percent" in f for f in facts) and any("540,000" in f and "four plants" in f for f in facts)

    again = rubrics_for(task37, judge)  # the next run, or a run for a new system: nothing asked again
    assert len(image_requests(llm)) == 1 and again["rubric"].to_list() == rubrics["rubric"].to_list()

    keys = [(s, task37.key) for s in SYSTEMS]
    judge_synthesis(keys, reports_frame(task37), task_frames([task37])["tasks"], rubrics, judge)
    assert len(image_requests(llm)) == 1  # report judgments read the stored facts, never the image


def test_a_cited_image_attachment_reads_as_its_key_facts_or_says_why_not(task37, judge):
    frames, texts = _frames(task37)
    pages = sandbox_pages(frames["task_sandbox"], texts)[task37.key]
    url = "attachment:37-plant-capacities.png"  # a report cites the file by its name, e.g. [Image: ...png]
    (unread,) = SandboxFetcher().fetch_many([url], pages)
    assert unread.status == "unknown" and unread.na_reason == "data_accessibility"
    assert "image attachment with no key facts" in unread.detail
    with_facts = with_image_facts({task37.key: pages}, rubrics_for(task37, judge))[task37.key]
    (read,) = SandboxFetcher().fetch_many([url], with_facts)
    assert read.status == "ok" and read.role == "attachment" and "220 thousand cubic metres" in read.text
    (other,) = SandboxFetcher().fetch_many(["attachment:notes.pdf"], with_facts)
    assert other.detail == "no readable attachment of that name"


def labels_by_claim(task, reports, rubrics, judge):
    """MiroEval's label of every statement of the reports, with the evidence the pipeline gathers."""
    frames, texts = _frames(task)
    pages = sandbox_pages(frames["task_sandbox"], texts)
    claims = parse_reports(reports)["report_claims"]
    keys = [(r["system"], r["task"]) for r in reports.iter_rows(named=True)]
    fetched = fetch_references(claims, with_image_facts(pages, rubrics), make_fetcher("sandbox"), keys)
    page_texts = {r["text_hash"]: r["text"] for r in fetched["page_texts"].iter_rows(named=True)}
    verdicts = judge_claims(claims, fetched["fetched_references"], page_texts, judge,
                            sandbox_evidence=with_image_facts(pages, rubrics, listed_only=True))
    found = {}
    for claim in claims.iter_rows(named=True):
        rows = verdicts.filter((verdicts["system"] == claim["system"]) & (verdicts["claim_id"] == claim["claim_id"]))
        evidence = ClaimEvidence(claim["claim_id"], claim["kind"], claim["text"], verdicts=tuple(
            SourceVerdict(r["source"], r["verdict"], r["origin"]) for r in rows.iter_rows(named=True)))
        found[(claim["system"], claim["text"])] = (label(evidence), rows)
    return found


def test_a_statement_the_web_supports_and_the_chart_contradicts_is_conflict(task37, judge):
    reports = reports_frame(task37, ("careful-scholar",))
    found = labels_by_claim(task37, reports, rubrics_for(task37, judge), judge)
    punta = next(v for (s, text), v in found.items() if "Punta Velas, has a capacity of 250,000" in text)
    conflict, rows = punta
    assert conflict == "CONFLICT"
    by_origin = {r["origin"]: r for r in rows.iter_rows(named=True)}
    assert by_origin["cited"]["verdict"] == "supported"
    assert by_origin["attachment"]["verdict"] == "contradicted" and by_origin["attachment"]["source"] == \
        "attachment:" + CHART
    combined = next(v for (s, text), v in found.items() if "combined capacity of 540,000" in text)
    assert combined[0] == "RIGHT"  # the chart agrees with the web there
    brief = next(v for (s, text), v in found.items() if "46 percent" in text)
    assert brief[0] == "CONFLICT"  # the brief's own conflict (41 percent) still found beside the chart

    offline = labels_by_claim(task37, reports, rubrics_for(task37, HeuristicJudge()), HeuristicJudge())
    assert next(v for (s, t), v in offline.items() if "Punta Velas, has a capacity" in t)[0] == "RIGHT"
