"""MMDR FLAE formula channel: measured report features and our fixed coefficients (documented here).

READ = sigma(4 (TTR - 0.45) - 4 (L - 0.10) - 6 E)   TTR type-token ratio of the first 1,000 words,
                                                     L share of sentences over 35 words, E share of
                                                     fragments (under 4 words)
INSH = sigma(3 (causal - 0.10) + 3 (critical - 0.10) + 2 (quantified - 0.30))   per-sentence rates
STRU = sigma(3 (H - 0.5) + 2 (compliance - 0.5))     H heading coverage min(1, sections / 4),
                                                     compliance = mean of: references block present,
                                                     inline citations used, an image embedded when
                                                     the task is multimodal
alpha_det inputs: L length completeness min(1, words / 800); H as above; C share of claims cited;
Ref reference-block validity (a block, and every cited index resolves).
"""
from __future__ import annotations

import math
import re

from .report_parser import parse_report

_WORD = re.compile(r"[^\W_]+")
_CAUSAL = re.compile(r"\b(because|therefore|thus|hence|as a result|due to|leads? to|led to|driven by|consequently)\b", re.I)
_CRITICAL = re.compile(r"\b(however|although|limitation|uncertain|risk|whereas|despite|unclear|caveat)\w*", re.I)
_QUANTIFIED = re.compile(r"\d")


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def flae_observables(report: str, multimodal: bool) -> dict[str, float]:
    parsed = parse_report(report)
    sentences = parsed.sentences or [report]
    words = _WORD.findall(report.lower())
    first = words[:1000]
    lengths = [len(_WORD.findall(s)) for s in sentences]
    n = max(1, len(sentences))
    sections = sum(1 for s in parsed.sections if s.level > 0)
    cited = [c for c in parsed.claims if c.kind != "uncited"]
    compliance = [float(parsed.has_reference_list), float(parsed.has_inline_citations)]
    if multimodal:
        compliance.append(float(bool(parsed.figures)))
    return {
        "ttr": len(set(first)) / max(1, len(first)),
        "long": sum(1 for x in lengths if x > 35) / n,
        "fragments": sum(1 for x in lengths if x < 4) / n,
        "causal": sum(1 for s in sentences if _CAUSAL.search(s)) / n,
        "critical": sum(1 for s in sentences if _CRITICAL.search(s)) / n,
        "quantified": sum(1 for s in sentences if _QUANTIFIED.search(s)) / n,
        "heading_coverage": min(1.0, sections / 4),
        "compliance": sum(compliance) / len(compliance),
        "length_completeness": min(1.0, len(words) / 800),
        "citation_compliance": len(cited) / max(1, len(parsed.claims)),
        "reference_validity": float(parsed.has_reference_list and not parsed.unresolved_indices),
    }


def formula_channel(obs: dict[str, float]) -> dict[str, float]:
    return {
        "read": _sigmoid(4 * (obs["ttr"] - 0.45) - 4 * (obs["long"] - 0.10) - 6 * obs["fragments"]),
        "insh": _sigmoid(3 * (obs["causal"] - 0.10) + 3 * (obs["critical"] - 0.10) + 2 * (obs["quantified"] - 0.30)),
        "stru": _sigmoid(3 * (obs["heading_coverage"] - 0.5) + 2 * (obs["compliance"] - 0.5)),
    }
