"""metric_scores: verdicts and parser output -> long-format metric rows, N/A with reasons."""
from __future__ import annotations

from dataclasses import asdict
from typing import Sequence

import polars as pl

from ..core.metrics import ClaimFacts, report_metrics, unreadable_report_metrics
from .frames import frame


def score_reports(
    keys: Sequence[tuple[str, str]], reports: pl.DataFrame, parsed: pl.DataFrame, claims: pl.DataFrame,
    verdicts: pl.DataFrame, judge_id: str,
) -> pl.DataFrame:
    report_by_key = {(r["system"], r["task"]): r for r in reports.iter_rows(named=True)}
    parsed_by_key = {(r["system"], r["task"]): r for r in parsed.iter_rows(named=True)}
    claims_by_key: dict[tuple[str, str], list[ClaimFacts]] = {}
    for c in claims.iter_rows(named=True):
        n_targets = len(set(c["urls"] or [])) + len(set(c["unresolved_indices"] or []))
        claims_by_key.setdefault((c["system"], c["task"]), []).append(ClaimFacts(c["claim_id"], c["kind"], n_targets))
    verdicts_by_key: dict[tuple[str, str], dict[str, list[str]]] = {}
    for v in verdicts.iter_rows(named=True):
        verdicts_by_key.setdefault((v["system"], v["task"]), {}).setdefault(v["claim_id"], []).append(v["verdict"])

    rows = []
    for key in keys:
        report = report_by_key.get(key)
        if report is None or report["status"] != "ok":
            detail = report["detail"] if report else "no reports row"
            reason = (report["na_reason"] if report else None) or "pipeline_failure"
            values = unreadable_report_metrics(reason, detail, judge_id)
        else:
            unresolved = (parsed_by_key.get(key) or {}).get("unresolved_indices") or []
            values = report_metrics(claims_by_key.get(key, []), verdicts_by_key.get(key, {}), unresolved, judge_id)
        rows.extend({"system": key[0], "task": key[1], **asdict(v)} for v in values)
    return frame("metric_scores", rows)
