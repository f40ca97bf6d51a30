"""claim_verdicts: every cited claim against every source it cites, through the judge."""
from __future__ import annotations

from typing import Mapping

import polars as pl

from ..core.models import ClaimVerdict
from ..judges.base import Judge, JudgmentRequest
from ..judges.prompts import load_template
from .frames import frame

TEMPLATE = "claim_verdict"


def judge_claims(claims: pl.DataFrame, fetched: pl.DataFrame, texts: Mapping[str, str], judge: Judge) -> pl.DataFrame:
    _, template_hash = load_template(TEMPLATE)
    provenance = {"judge": judge.judge_id, "template": TEMPLATE, "template_hash": template_hash}
    pages = {(r["system"], r["task"], r["url"]): r for r in fetched.iter_rows(named=True)}
    rows: list[dict] = []
    pending: list[tuple[dict, JudgmentRequest]] = []
    for claim in claims.filter(pl.col("kind") != "uncited").iter_rows(named=True):
        base = {"system": claim["system"], "task": claim["task"], "claim_id": claim["claim_id"], **provenance}
        for index in claim["unresolved_indices"] or []:
            rows.append(_unknown(base, f"[{index}]", "model_failure",
                                 f"citation [{index}] has no URL in the report's reference list"))
        for url in claim["urls"] or []:
            page = pages.get((claim["system"], claim["task"], url))
            if page is None or page["status"] != "ok" or not texts.get(page["page_hash"]):
                reason = page["na_reason"] if page else "pipeline_failure"
                detail = page["detail"] if page else "URL missing from fetched_references"
                rows.append(_unknown(base, url, reason or "data_accessibility", detail))
                continue
            request = JudgmentRequest(TEMPLATE, {
                "claim": claim["text"], "source_url": url, "source_title": page["title"] or "",
                "source_text": texts[page["page_hash"]]}, ClaimVerdict)
            pending.append(({**base, "source": url}, request))
    judgments = judge.judge_many([request for _, request in pending])
    for (base, _), judgment in zip(pending, judgments, strict=True):
        if judgment.answer is None:
            rows.append(_unknown(base, base["source"], judgment.na_reason or "pipeline_failure", judgment.error))
            continue
        answer: ClaimVerdict = judgment.answer  # type: ignore[assignment]
        rows.append({**base, "verdict": answer.verdict, "score": judgment.extra.get("score"),
                     "evidence": answer.evidence, "reason": answer.reason, "na_reason": None})
    return frame("claim_verdicts", rows)


def _unknown(base: dict, source: str, na_reason: str, detail: str) -> dict:
    return {**base, "source": source, "verdict": "unknown", "score": None, "evidence": "",
            "reason": detail, "na_reason": na_reason}
