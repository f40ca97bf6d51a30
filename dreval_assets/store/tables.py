"""Which tables belong to which asset, and how their partitions are keyed."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AssetStorage:
    tables: tuple[str, ...]  # the first is the asset's own table
    key_columns: tuple[str, ...]  # partition key columns shared by all its tables


ASSET_STORAGE: dict[str, AssetStorage] = {
    "tasks": AssetStorage(("tasks", "task_sandbox"), ("task",)),
    "task_rubrics": AssetStorage(("task_rubrics",), ("task",)),
    "reports": AssetStorage(("reports",), ("system", "task")),
    "trace_steps": AssetStorage(("trace_steps",), ("system", "task")),
    "parsed_reports": AssetStorage(("parsed_reports", "report_claims"), ("system", "task")),
    "report_images": AssetStorage(("report_images",), ("system", "task")),
    "fetched_references": AssetStorage(("fetched_references",), ("system", "task")),
    "claim_verdicts": AssetStorage(("claim_verdicts",), ("system", "task")),
    "report_judgments": AssetStorage(("report_judgments",), ("system", "task")),
    "metric_scores": AssetStorage(("metric_scores",), ("system", "task")),
    "leaderboard": AssetStorage(("leaderboard",), ()),
    "agreement": AssetStorage(("agreement",), ()),
}

# Content-addressed tables: rows are inserted once and never deleted by a partition rewrite.
CONTENT_ADDRESSED: dict[str, str] = {"page_texts": "text_hash", "image_blobs": "image_hash"}
