"""MMDR's FID with the paper's checks: over-specificity and causal inversion are unfaithful (contradicted),
not only a direct contradiction. Its tasks' claims are asked with MMDR's own verdict prompts; other
benchmarks' tasks keep the shared ones. Offline, two measured checks stand in for a reading."""
from __future__ import annotations

import polars as pl

from dreval_assets.benchmarks.mmdr.fidelity import causal_inversion, over_specific
from dreval_assets.judges.prompts import render
from dreval_assets.stages.frames import SCHEMAS, frame
from dreval_assets.stages.verdicts import judge_claims
from recording_judge import RecordingJudge

URL = "https://ports.example/review"
PAGE = ("The port handled 41% more containers in 2023 than in 2022. Cheaper fuel led to lower freight rates on "
        "the northern route, the authority said. The new crane arrived in March.")


def claims_frame(task: str, texts: list[str]) -> pl.DataFrame:
    return frame("report_claims", [
        {**{k: None for k in SCHEMAS["report_claims"]}, "system": "s", "task": task, "claim_id": f"c{i}",
         "kind": "sentence", "text": text, "urls": [URL], "unresolved_indices": []} for i, text in enumerate(texts)])


def fetched(task: str) -> pl.DataFrame:
    return frame("fetched_references", [{**{k: None for k in SCHEMAS["fetched_references"]}, "system": "s",
                                         "task": task, "url": URL, "status": "ok", "page_hash": "p", "title": "Port"}])


def tasks(*pairs) -> pl.DataFrame:
    return frame("tasks", [{**{k: None for k in SCHEMAS["tasks"]}, "task": t, "benchmark": b} for t, b in pairs])


CLAIMS = ["The port handled 41.37% more containers in 2023 than in 2022.",  # over-specific
          "Lower freight rates on the northern route led to cheaper fuel.",  # causal inversion
          "The port handled 41% more containers in 2023 than in 2022."]  # faithful


def test_offline_checks_find_over_specificity_and_causal_inversion():
    assert "41.37 where the source gives 41" in over_specific(CLAIMS[0], PAGE)
    assert over_specific(CLAIMS[2], PAGE) == "" and over_specific("It rose 41.0% in 2023.", "It rose 41.5%.") == ""
    assert causal_inversion(CLAIMS[1], PAGE).startswith("causal inversion")
    assert causal_inversion("Cheaper fuel led to lower freight rates.", PAGE) == ""
    assert causal_inversion("Freight rates fell because of cheaper fuel.", PAGE) == ""  # same direction, said backwards


def test_mmdr_claims_are_checked_for_fidelity_and_count_as_contradicted():
    judge = RecordingJudge()
    both = pl.concat([claims_frame("mmdr.q1", CLAIMS), claims_frame("tvir.1", CLAIMS)])
    rows = judge_claims(both, pl.concat([fetched("mmdr.q1"), fetched("tvir.1")]), {"p": PAGE}, judge, batch_size=8,
                        tasks=tasks(("mmdr.q1", "mmdr"), ("tvir.1", "tvir")))
    templates = {r.labels["task"]: r.template for r in judge.requests}
    assert templates == {"mmdr.q1": "mmdr/claim_verdicts_batch", "tvir.1": "claim_verdicts_batch"}
    prompt = render("mmdr/claim_verdicts_batch", dict(next(r for r in judge.requests
                                                           if r.labels["task"] == "mmdr.q1").variables))
    assert "over-specific" in prompt and "inverts causation" in prompt
    verdict = {(r["task"], r["claim_id"]): r["verdict"] for r in rows.iter_rows(named=True)}
    assert [verdict[("mmdr.q1", f"c{i}")] for i in range(3)] == ["contradicted", "contradicted", "supported"]
    # the shared prompt, and its offline matching, stay as they were for other benchmarks
    assert verdict[("tvir.1", "c2")] == "supported" and verdict[("tvir.1", "c0")] != "contradicted"
    reasons = dict(zip(rows.filter(pl.col("task") == "mmdr.q1")["claim_id"],
                       rows.filter(pl.col("task") == "mmdr.q1")["reason"]))
    assert reasons["c0"].startswith("over-specific") and reasons["c1"].startswith("causal inversion")
