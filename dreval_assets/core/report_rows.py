"""One report's parsed_reports row and claim rows, from the parser (`report_parser`). Pure and light
(no polars, no Dagster): the command's parse helper process loads only this and the parser."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from . import report_parser
from .models import ParsedReport

_PARSER_MODULES = ("report_parser.py", "sentences.py", "citation_markers.py", "reference_list.py", "chatter.py",
                   "models.py")
_CORE = Path(report_parser.__file__).parent
# The parser's version is the hash of its source: changed parsing code is a new version.
PARSER_VERSION = "parser-" + hashlib.sha256(
    b"".join((_CORE / name).read_bytes() for name in _PARSER_MODULES if (_CORE / name).is_file())
).hexdigest()[:12]


def citation_style(parsed: ParsedReport) -> str:
    """inline: the text carries citations; bibliography_only: a source list nobody cites; none."""
    if parsed.has_inline_citations:
        return "inline"
    return "bibliography_only" if parsed.has_reference_list else "none"


_CLAIM_FIELDS = {"claim_id", "kind", "text", "section", "citation_indices", "urls", "unresolved_indices"}


def parsed_rows(system: str, task: str, status: str, detail: str | None, text: str | None) -> tuple[dict, list[dict]]:
    """One report's parsed_reports row and its claim rows (in whichever process parses it)."""
    if status != "ok":
        parsed = ParsedReport(warnings=[f"report not parsed: {status} ({detail})"])
    else:
        parsed = report_parser.parse_report(text)
    claims = [{"system": system, "task": task, **claim.model_dump(include=_CLAIM_FIELDS),
               "source_claim": claim.claim_id, "extraction": "sentences"} for claim in parsed.claims]
    return _report_row(system, task, parsed), claims


def _report_row(system: str, task: str, parsed: ParsedReport) -> dict:
    def as_json(items) -> str:
        return json.dumps([i.model_dump() for i in items], ensure_ascii=False)

    return {
        "system": system, "task": task, "parser_version": PARSER_VERSION,
        "n_sections": len(parsed.sections), "n_sentences": len(parsed.sentences),
        "n_claims": len(parsed.claims),
        "n_cited_claims": sum(1 for c in parsed.claims if c.kind != "uncited"),
        "n_references": len(parsed.references), "n_figures": len(parsed.figures),
        "n_tables": len(parsed.tables),
        "has_inline_citations": parsed.has_inline_citations,
        "has_reference_list": parsed.has_reference_list,
        "bibliography_only": parsed.has_reference_list and not parsed.has_inline_citations,
        "citation_style": citation_style(parsed),
        "unresolved_indices": parsed.unresolved_indices,
        "sections": as_json(parsed.sections), "references": as_json(parsed.references),
        "figures": as_json(parsed.figures), "tables": as_json(parsed.tables),
        "warnings": parsed.warnings,
        "extraction": "sentences", "n_statements": len(parsed.claims), "n_ungrounded": 0,
        "extraction_na_reason": None, "extraction_detail": "",
    }
