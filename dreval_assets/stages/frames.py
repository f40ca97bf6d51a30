"""Small helpers to build frames with the exact columns of a table, even when empty."""
from __future__ import annotations

import hashlib
from typing import Iterable, Mapping

import polars as pl

# Column types of the tables stages produce; names mirror sql/schema.sql.
S, I, F, B = pl.String, pl.Int32, pl.Float64, pl.Boolean
LS, LI = pl.List(pl.String), pl.List(pl.Int32)

SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    "tasks": {"task": S, "benchmark": S, "original_id": S, "query": S, "language": S, "domain": S,
              "modality": S, "attachments": LS, "checklist": LS, "reference_article": S,
              "gold_facts": LS, "n_sandbox_pages": I, "content_hash": S, "gold_insights": LS,
              "gold_insights_sandbox": LS,
              "visual_ground_truth": S, "visual_ground_truth_version": S, "race_criteria": S, "attributes": S},
    "task_sandbox": {"task": S, "url": S, "url_norm": S, "title": S, "role": S, "text_hash": S, "corpora": S},
    "task_rubrics": {"task": S, "kind": S, "rubric": S, "judge": S, "template": S, "template_hash": S,
                     "cache_key": S, "na_reason": S, "detail": S},
    "page_texts": {"text_hash": S, "text": S, "n_chars": I},
    "reports": {"system": S, "task": S, "status": S, "text": S, "n_chars": I, "content_hash": S,
                "source_path": S, "na_reason": S, "detail": S, "trace": S, "cleaned_text": S,
                "release_statements": S},
    "trace_steps": {"system": S, "task": S, "step": I, "kind": S, "text": S, "queries": LS, "urls": LS,
                    "depends_on": LI, "shape": S, "warnings": LS},
    "parsed_reports": {"system": S, "task": S, "parser_version": S, "n_sections": I, "n_sentences": I,
                       "n_claims": I, "n_cited_claims": I, "n_references": I, "n_figures": I,
                       "n_tables": I, "has_inline_citations": B, "has_reference_list": B,
                       "bibliography_only": B, "unresolved_indices": LI, "sections": S,
                       "references": S, "figures": S, "tables": S, "warnings": LS, "citation_style": S,
                       "extraction": S, "n_statements": I, "n_ungrounded": I, "extraction_na_reason": S,
                       "extraction_detail": S},
    "report_claims": {"system": S, "task": S, "claim_id": S, "kind": S, "text": S, "section": S,
                      "citation_indices": LI, "urls": LS, "unresolved_indices": LI, "source_claim": S,
                      "extraction": S},
    "fetched_references": {"system": S, "task": S, "url": S, "url_norm": S, "status": S, "backend": S,
                           "final_url": S, "title": S, "content_type": S, "page_hash": S,
                           "sandbox_role": S, "na_reason": S, "detail": S, "http_status": I,
                           "charset": S, "blocked": S, "truncated": B},
    "claim_verdicts": {"system": S, "task": S, "claim_id": S, "source": S, "verdict": S, "score": F,
                       "evidence": S, "reason": S, "na_reason": S, "judge": S, "template": S,
                       "template_hash": S, "model": S, "temperature": F, "seed": I, "cache_key": S,
                       "batch_size": I, "source_truncated": B, "origin": S,
                       "search_query": S},
    "report_judgments": {"system": S, "task": S, "kind": S, "item_id": S, "item": S, "credit": F, "reason": S,
                         "na_reason": S, "judge": S, "template": S, "template_hash": S, "cache_key": S,
                         "score": F},
    "report_images": {"system": S, "task": S, "figure": I, "src": S, "caption": S, "section": S,
                      "citation_indices": LI, "context": S, "kind": S, "status": S, "invalid_reason": S,
                      "na_reason": S, "location": S, "image_hash": S, "width": I, "height": I, "sharpness": F,
                      "contrast": F, "phash": S, "duplicate_of": I, "origin": S},
    "metric_scores": {"system": S, "task": S, "suite": S, "metric": S, "value": F, "scale": S,
                      "n_items": I, "na_reason": S, "detail": S, "policy": S, "judge": S,
                      "judged_share": F, "unjudged_reason": S},
    "leaderboard": {"system": S, "suite": S, "metric": S, "judge": S, "scale": S, "mean": F,
                    "ci_low": F, "ci_high": F, "n_tasks": I, "n_scored": I, "coverage": F,
                    "shared_mean": F, "n_shared": I, "rank": I, "coverage_note": S,
                    "aggregation": S, "validity": F, "adjusted_mean": F, "status": S, "breakdown": S,
                    "computed_at": pl.Datetime("us")},
    "agreement": {"benchmark": S, "metric": S, "judge": S, "scale": S, "n_pairs": I, "n_systems": I, "n_tasks": I,
                  "pearson_r": F, "kendall_tau": F, "par": F, "par_pairs": I, "opc": F, "osc": F, "mean_diff": F,
                  "note": S, "computed_at": pl.Datetime("us")},
}


# Columns added later that a row may leave out: a report's research trace (migration 020), a score's
# judged share and a leaderboard row's status (migration 027) and breakdown (migration 030), a figure's
# origin (migration 033).
DEFAULTS: dict[str, dict[str, object]] = {"reports": {"trace": None, "cleaned_text": None, "release_statements": None},
                                          "metric_scores": {"judged_share": None, "unjudged_reason": None},
                                          "leaderboard": {"status": "scored", "breakdown": ""},
                                          "report_images": {"origin": "figure"}}


def frame(table: str, rows: Iterable[Mapping]) -> pl.DataFrame:
    """A frame with exactly the table's columns and types; a missing key is an error."""
    schema = SCHEMAS[table]
    defaults = DEFAULTS.get(table)
    rows = [{**defaults, **row} for row in rows] if defaults else list(rows)
    for row in rows:
        missing = schema.keys() - row.keys()
        if missing:
            raise KeyError(f"{table} row lacks {sorted(missing)}")
    return pl.DataFrame([{k: row[k] for k in schema} for row in rows], schema=schema, orient="row")


def as_table(table: str, df: pl.DataFrame) -> pl.DataFrame:
    """A frame that holds (at least) a table's columns, as that table's frame: its columns, in order, of
    its types (what `frame` makes of the same rows, without going through Python rows)."""
    schema = SCHEMAS[table]
    missing = schema.keys() - set(df.columns)
    if missing:
        raise KeyError(f"{table} frame lacks {sorted(missing)}")
    return df.select(list(schema)).cast(schema)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def rows_by_partition(df: pl.DataFrame) -> dict[tuple[str, str], dict]:
    """Each (system, task) partition's row, for frames with one row per report."""
    return {(r["system"], r["task"]): r for r in df.iter_rows(named=True)}


def partitions_of(df: pl.DataFrame) -> list[tuple[str, str]]:
    return [tuple(r) for r in df.select("system", "task").unique(maintain_order=True).iter_rows()]
