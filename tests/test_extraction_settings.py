"""Policy `claims.extraction`: which claims a run makes, that the choice shapes `parsed_reports` (a
change makes exactly those partitions due), that a failed extraction is retried, and that every
claim-counting metric row names the extraction it rests on."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence, SourceVerdict
from dreval_assets.benchmarks.suites import SUITES
from dreval_assets.config import ConfigError, Settings
from dreval_assets.operations.planner import PROVIDER_FAILED_REPORTS, _made_under_other_settings
from dreval_assets.stages.parse import parse_reports, with_statements
from dreval_assets.stages.scores import extraction_text
from dreval_assets.store.db import Store

REPORT = ("# Ferries\n\nThe ferry carried 1.2 million people in 2023 and fares rose 4% [1].\n\n"
          "## References\n[1] Port report https://port.example/2023\n")


def settings(tmp_path: Path, judge: str = "heuristic", policy: str | None = None, model: str = "") -> Settings:
    policies = json.dumps({"claims.extraction": policy}) if policy else "{}"
    return Settings(tmp_path, judge=judge, policies=policies, judge_model=model)


def test_auto_extracts_statements_with_an_llm_judge_and_keeps_sentences_offline(tmp_path):
    assert settings(tmp_path).extraction() == "sentences"
    assert settings(tmp_path, "openai").extraction() == "llm"
    assert settings(tmp_path, "openai", "sentences").extraction() == "sentences"
    with pytest.raises(ConfigError, match="claims.extraction=llm needs an LLM judge"):
        settings(tmp_path, policy="llm").validate()


def test_the_extraction_shapes_parsed_reports_and_nothing_upstream(tmp_path):
    llm, sentences = settings(tmp_path, "openai", model="m1"), settings(tmp_path, "openai", "sentences", "m1")
    assert llm.shaping_version("parsed_reports") != sentences.shaping_version("parsed_reports")
    assert llm.shaping_version("parsed_reports") != settings(tmp_path, "openai", model="m2").shaping_version(
        "parsed_reports")  # another model extracts other statements
    # offline, the judge's name does not matter: sentences are the parser's
    assert settings(tmp_path).shaping_version("parsed_reports") == sentences.shaping_version("parsed_reports")


def test_the_statement_set_and_the_embedding_model_shape_what_they_change(tmp_path):
    default = Settings(tmp_path)
    ours = Settings(tmp_path, policies=json.dumps({"wlc.statements": "claims"}))
    assert default.shaping_version("parsed_reports") == settings(tmp_path).shaping_version("parsed_reports")
    assert ours.shaping_version("parsed_reports") != default.shaping_version("parsed_reports")
    assert Settings(tmp_path, policies=json.dumps({"wlc.bot_walls": "drop"})).shaping_version(
        "parsed_reports") == default.shaping_version("parsed_reports")  # a scoring policy does not re-parse
    plain = Settings(tmp_path, judge="openai", judge_model="m1")
    embedding = Settings(tmp_path, judge="openai", judge_model="m1", judge_embedding_model="e1")
    assert plain.shaping_version("report_judgments") != embedding.shaping_version("report_judgments")
    assert plain.shaping_version("parsed_reports") == embedding.shaping_version("parsed_reports")


def reports_frame() -> pl.DataFrame:
    return pl.DataFrame([{"system": "s", "task": "t", "status": "ok", "text": REPORT, "n_chars": len(REPORT),
                          "content_hash": "h", "source_path": "", "na_reason": None, "detail": ""}])


def test_a_change_of_extraction_makes_the_parsed_partitions_due(tmp_path):
    store = Store(tmp_path / "dreval.duckdb")
    store.ensure_schema()
    frames = parse_reports(reports_frame())
    before = settings(tmp_path, "openai", "sentences", "m1")
    store.replace_partitions("parsed_reports", [("s", "t")], frames, "run-1",
                             before.shaping_version("parsed_reports"))
    assert _made_under_other_settings(store, ("parsed_reports",), before, {}) == {}
    due = _made_under_other_settings(store, ("parsed_reports",), settings(tmp_path, "openai", model="m1"), {})
    assert set(due) == {("s", "t")}


def statements_of(frames: dict[str, pl.DataFrame], failed: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """What the extraction stage returns for the one report: two statements from its one sentence."""
    unit = frames["report_claims"].row(0, named=True)
    rows = [{**unit, "claim_id": f"{unit['claim_id']}.s{k}", "text": text, "source_claim": unit["claim_id"],
             "extraction": "llm"} for k, text in enumerate(("The ferry carried 1.2 million people in 2023.",
                                                             "Ferry fares rose 4% in 2023."), start=1)]
    summary = pl.DataFrame([{"system": "s", "task": "t", "n_units": 1, "n_statements": 2, "n_ungrounded": 1,
                             "na_reason": "provider_failure" if failed else None,
                             "detail": "1 of 2 chunks failed (provider_failure: HTTP 500)" if failed else ""}])
    return pl.DataFrame(rows), summary


def test_statements_replace_the_claims_and_the_report_row_says_how(tmp_path):
    frames = parse_reports(reports_frame())
    merged = with_statements(frames["parsed_reports"], *statements_of(frames, failed=False))
    claims = merged["report_claims"]
    assert claims.get_column("claim_id").to_list() == ["c0001.s1", "c0001.s2"]
    assert set(claims.get_column("urls").to_list()[0]) == {"https://port.example/2023"}  # the sentence's own
    row = merged["parsed_reports"].row(0, named=True)
    assert (row["extraction"], row["n_statements"], row["n_claims"], row["n_ungrounded"]) == ("llm", 2, 1, 1)
    assert extraction_text(row) == ("claims: 2 statements grounded in 1 parsed sentences (claims.extraction = llm; "
                                    "1 ungrounded dropped)")


def test_a_failed_extraction_is_due_again(tmp_path):
    store = Store(tmp_path / "dreval.duckdb")
    store.ensure_schema()
    frames = parse_reports(reports_frame())
    store.replace_partitions("parsed_reports", [("s", "t")], with_statements(frames["parsed_reports"], *statements_of(frames, True)),
                             "run-1")
    assert store.query(PROVIDER_FAILED_REPORTS).rows() == [("s", "t")]


def test_claim_counting_rows_name_the_extraction_and_others_do_not():
    claim = ClaimEvidence("c0001.s1", "sentence", "Ferry fares rose 4% in 2023.", ("https://port.example/2023",), (),
                          (SourceVerdict("https://port.example/2023", "supported"),))
    evidence = ReportEvidence("s", "t", "tvir", "judge-x", claims=[claim], extraction="claims: 1 statements grounded "
                              "in 1 parsed sentences (claims.extraction = llm; 0 ungrounded dropped)",
                              checklist=[1.0], rubric_scores={"tvir.wq.a": 8.0})
    rows = {v.metric: v for v in SUITES["tvir"].score(evidence)}
    assert rows["cs"].policy.endswith("(claims.extraction = llm; 0 ungrounded dropped)")
    assert "claims.extraction" not in rows["wq"].policy and "claims.extraction" not in rows["ia"].policy
    core = {v.metric: v for v in SUITES["core"].score(evidence)}
    assert "claims.extraction = llm" in core["supported_ratio"].policy
