"""The offline judge answers only what it can measure: Chinese it reads (bigrams, 万/亿, full-width
digits), other languages it does not read are N/A `pipeline_failure` marked "judge limit: " (ours, never the
system's fault) with the language named, on the judgment and on the metric rows users read."""
from __future__ import annotations

import polars as pl
import pytest

from dreval_assets.core.checklist_match import item_credit
from dreval_assets.core.key_facts import extract_key_facts, share_kept
from dreval_assets.core.language import detect_language, fold_width, han_terms, word_count
from dreval_assets.core.models import (ChecklistJudgment, ClaimVerdict, ContradictionCount, KeyFacts, RubricScores,
                                       SameStatement, SandboxPage, Task)
from dreval_assets.judges.base import JudgmentRequest
from dreval_assets.judges.heuristic import HeuristicJudge
from zh_report_fixture import (ATTACHMENT, CAAM_PAGE, CAAM_URL, CHANGED_CLAIM, REPORT, SUPPORTED_CLAIM, TASK,
                               run_stages)

ZH_DOES_NOT_READ = "judge limit: heuristic judge does not read Chinese (zh)"
ENGLISH_PAGE = """Electric car sales in China reached 8.1 million in 2023, an increase of 35% on the year before.
The country's new energy vehicle market benefited from fierce price competition and a maturing supply chain, and
exports of electric cars grew strongly to Europe and South East Asia over the course of the year.
"""
JAPANESE_REPORT = """# 2023年の日本の電気自動車市場

2023年の日本の電気自動車の販売台数は約8万8千台で、新車販売全体の1.7%にとどまった[1]。政府は2035年までに新車販売の100%を電動車にする目標を掲げている[1]。

## 参考文献

[1] 日本自動車販売協会連合会 https://www.jada.example.jp/2024/ev
"""
JAPANESE_PAGE = ("日本自動車販売協会連合会によると、2023年の電気自動車の販売台数は約8万8千台で、新車販売全体の1.7%"
                 "にとどまった。政府は2035年までに新車販売の100%を電動車にする目標を掲げているが、充電設備の整備が"
                 "課題となっている。")
FRENCH_REPORT = ("# Le marché français des voitures électriques\n\n" + (
    "En 2023, les ventes de voitures électriques en France ont atteint 298 000 unités, soit une part de marché de "
    "16,8 %. Le gouvernement a renforcé le bonus écologique pour les ménages modestes et prévoit de nouvelles "
    "bornes de recharge dans les zones rurales au cours des prochaines années. ") * 3)


def judge_one(template: str, variables: dict, model) -> object:
    [judgment] = HeuristicJudge().judge_many([JudgmentRequest(template, variables, model)])
    return judgment


# ------------------------------------------------------------------ detection


@pytest.mark.parametrize(("text", "code"), [
    (REPORT, "zh"),  # English-titled URLs in the reference list do not make it English
    (JAPANESE_REPORT, "ja"),  # kanji and kana: Japanese, not Chinese
    ("서울은 대한민국의 수도이며 가장 큰 도시이다. 인구는 약 940만 명이다.", "ko"),
    ("Москва — столица России и крупнейший по численности населения город страны.", "cyrl"),
    ("القاهرة هي عاصمة جمهورية مصر العربية وأكبر مدنها من حيث عدد السكان.", "arab"),
    (ENGLISH_PAGE, "en"),
    (ENGLISH_PAGE + " BYD (比亚迪) led the market.", "en"),  # a Chinese name in English prose
    (FRENCH_REPORT, "latn"),
    ("Sales rose sharply.", "en"),  # too few Latin words to tell English from other Latin-script text
])
def test_language_is_told_by_its_script(text: str, code: str) -> None:
    assert detect_language(text).code == code


def test_text_without_enough_letters_has_no_language() -> None:
    assert detect_language("| 2023 | 949.5 | 37.9% |") is None
    assert detect_language("https://www.caam.example.cn/2024/01/annual-report-on-the-automobile-industry") is None


def test_chinese_reading_pieces() -> None:
    assert fold_width("９４９．５万辆，同比增长３７．９％") == "949.5万辆，同比增长37.9%"
    assert fold_width("120，350") == "120，350"  # a full-width comma separates two numbers: kept
    assert han_terms("2023年新能源汽车的销量") == ["年", "新能", "能源", "源汽", "汽车", "销量"]
    assert word_count("新能源汽车销量 grew 37.9%") == 3 + 2  # seven characters count as three words


# ------------------------------------------------------------------ handlers


def test_chinese_claim_verdicts_read_chinese() -> None:
    supported = judge_one("claim_verdict", {"claim": SUPPORTED_CLAIM, "source_text": CAAM_PAGE}, ClaimVerdict)
    changed = judge_one("claim_verdict", {"claim": "新能源汽车产销分别完成958.7万辆和949.5万辆，市场占有率达到41.6%。",
                                          "source_text": CAAM_PAGE}, ClaimVerdict)
    assert supported.answer.verdict == "supported", supported.answer.reason
    assert changed.answer.verdict == "contradicted" and "'41.6%'" in changed.answer.reason


@pytest.mark.parametrize(("claim", "source", "error"), [
    (SUPPORTED_CLAIM, ENGLISH_PAGE, "heuristic judge does not compare texts across languages "
                                    "(claim in Chinese (zh), source in English (en))"),
    ("2023年の電気自動車の販売台数は約8万8千台だった。", JAPANESE_PAGE, "heuristic judge does not read Japanese (ja)"),
])
def test_claim_verdict_it_cannot_measure_is_a_judge_limit(claim: str, source: str, error: str) -> None:
    judgment = judge_one("claim_verdict", {"claim": claim, "source_text": source}, ClaimVerdict)
    assert judgment.answer is None
    assert judgment.na_reason == "pipeline_failure" and judgment.error == "judge limit: " + error
    assert judgment.provenance.judge_id == "heuristic-v1"


def test_latin_script_claims_are_matched_on_overlap_and_numbers() -> None:
    page = FRENCH_REPORT.split("\n\n", 1)[1]
    kept = judge_one("claim_verdict", {"claim": "En 2023, les ventes de voitures électriques en France ont atteint "
                                                "298 000 unités.", "source_text": page}, ClaimVerdict)
    assert kept.na_reason is None and kept.answer.verdict in ("supported", "partial"), kept.answer


def test_checklist_reads_chinese_requirements_in_a_chinese_report() -> None:
    assert item_credit("报告是否给出2023年新能源汽车的销量和同比增长率？", REPORT)[0] == 1.0
    assert item_credit("报告是否比较主要车企的市场份额？", REPORT)[0] == 0.0
    assert item_credit("报告是否分析充电基础设施的建设情况？", "图表待插入：充电基础设施建设情况\n\n2023年销量增长。")[0] == 0.0


def test_checklist_in_another_language_than_the_report_is_a_judge_limit() -> None:
    judgment = judge_one("checklist_items", {"report": REPORT, "item_list": [
        {"item_id": "i01", "text": "Does the report give the 2023 sales of new energy vehicles?"}]}, ChecklistJudgment)
    assert judgment.answer is None and judgment.na_reason == "pipeline_failure"
    assert "across languages (requirement in English (en), report in Chinese (zh))" in judgment.error


@pytest.mark.parametrize(("template", "model", "variables"), [
    ("rubric_scores", RubricScores, {"rubric_id": "tvir.wq", "report": REPORT}),
    ("tvir/contradictions", ContradictionCount, {"report": REPORT}),
])
def test_english_word_list_handlers_do_not_read_chinese(template, model, variables) -> None:
    judgment = judge_one(template, variables, model)
    assert judgment.answer is None and judgment.na_reason == "pipeline_failure" and judgment.error == ZH_DOES_NOT_READ


def test_english_report_with_a_chinese_name_is_still_read() -> None:
    report = "# EV market\n\n" + ENGLISH_PAGE + "\nBYD (比亚迪) remained the best-selling manufacturer.\n"
    judgment = judge_one("rubric_scores", {"rubric_id": "tvir.adb", "report": report}, RubricScores)
    assert judgment.na_reason is None and len(judgment.answer.scores) == 5


def test_other_latin_script_languages_are_not_read_with_english_word_lists() -> None:
    judgment = judge_one("rubric_scores", {"rubric_id": "tvir.adb", "report": FRENCH_REPORT}, RubricScores)
    assert judgment.na_reason == "pipeline_failure"
    assert judgment.error == "judge limit: heuristic judge does not read Latin-script text other than English (latn)"


def test_same_statement_reads_chinese_by_bigrams() -> None:
    same = judge_one("same_statement", {"statement_a": "2023年新能源汽车出口120.3万辆，同比增长77.6%。",
                                        "statement_b": "2023年，新能源汽车出口120.3万辆，同比增长77.6%。"}, SameStatement)
    other = judge_one("same_statement", {"statement_a": "2023年新能源汽车出口120.3万辆。",
                                         "statement_b": "2023年公共充电桩新增120.3万台。"}, SameStatement)
    assert same.answer.same is True and other.answer.same is False


def test_key_facts_of_a_chinese_attachment_and_whether_a_report_keeps_them() -> None:
    judgment = judge_one("miroeval/key_facts", {"attachment_text": ATTACHMENT, "max_facts": 12}, KeyFacts)
    facts = judgment.answer.facts
    assert facts == extract_key_facts(ATTACHMENT, 12) == [
        "2023年，全国新能源汽车产量为958.7万辆，销量为949.5万辆，市场占有率为31.6%。",
        "全年新能源汽车出口120.3万辆，同比增长77.6%。", "截至2023年底，全国充电基础设施累计达到859.6万台。"]
    # the report gives no production figure and changed the export figure to 150.3万: one fact of three kept
    assert share_kept(facts, REPORT) == (pytest.approx(1 / 3), 1)
    assert share_kept(facts[2:], REPORT) == (1.0, 1)


# ------------------------------------------------------------------ metric rows


@pytest.fixture(scope="module")
def chinese_run() -> dict[str, pl.DataFrame]:
    return run_stages([TASK], {("zh-system", TASK.key): REPORT})


def rows(scores: pl.DataFrame) -> dict[tuple[str, str], dict]:
    return {(r["suite"], r["metric"]): r for r in scores.iter_rows(named=True)}


def test_chinese_claims_get_verdicts_a_changed_number_is_contradicted(chinese_run) -> None:
    claims = {r["claim_id"]: r["text"] for r in chinese_run["claims"].iter_rows(named=True)}
    verdicts = {claims[r["claim_id"]]: r for r in chinese_run["verdicts"].iter_rows(named=True) if r["origin"] == "cited"}
    supported = next(v for text, v in verdicts.items() if SUPPORTED_CLAIM in text)
    changed = next(v for text, v in verdicts.items() if CHANGED_CLAIM in text)
    assert supported["verdict"] == "supported" and supported["na_reason"] is None
    assert changed["verdict"] == "contradicted" and "'120.3万'" in changed["reason"]


MEASURED = [("core", "supported_ratio"), ("core", "contradicted_ratio"), ("tvir", "ia"), ("tvir", "cs"),
            ("dr3", "if"), ("dr3", "fa"), ("mmdr", "con"), ("mmdr", "fid"), ("miroeval", "factuality"),
            ("wlc", "ref_acc"), ("wlc", "ref_conf"), ("drb", "race"), ("drb", "comprehensiveness"),
            ("drb", "fact_accuracy")]
NOT_READ = [("tvir", "wq"), ("tvir", "adb"), ("tvir", "flc"), ("dr3", "dq"), ("mmdr", "read"), ("mmdr", "insh"),
            ("mmdr", "stru"), ("mmdr", "flae"), ("miroeval", "coverage"), ("miroeval", "insight"),
            ("miroeval", "instruction_following"), ("miroeval", "clarity"), ("miroeval", "specificity"),
            ("miroeval", "grounding"), ("miroeval", "synthesis"), ("wlc", "well_written"), ("wlc", "broad"),
            ("wlc", "neutral"), ("wlc", "writing")]


def test_measurable_metrics_of_a_chinese_report_have_sensible_values(chinese_run) -> None:
    found = rows(chinese_run["scores"])
    for key in MEASURED:
        assert found[key]["value"] is not None and found[key]["na_reason"] is None, (key, found[key])
    # 8 cited claims: 7 supported by their pages, the changed export figure contradicted
    assert found[("drb", "fact_accuracy")]["value"] == pytest.approx(100 * 7 / 8)
    assert found[("wlc", "ref_conf")]["value"] == pytest.approx(100 / 8)
    assert found[("miroeval", "wrong")]["value"] == 1.0
    # three of four requirements met, the market-share comparison is missing
    assert found[("tvir", "ia")]["value"] == pytest.approx(75.0)
    assert found[("dr3", "if")]["value"] == pytest.approx(75.0)
    # RACE: the report covers more of the criteria's terms than the shorter reference report
    assert found[("drb", "race")]["value"] > 50


def test_unmeasurable_metrics_of_a_chinese_report_are_a_judge_limit_naming_chinese(chinese_run) -> None:
    found = rows(chinese_run["scores"])
    for key in NOT_READ:
        row = found[key]
        assert row["value"] is None and row["na_reason"] == "pipeline_failure", (key, row)
        assert ZH_DOES_NOT_READ in row["detail"] and row["judge"] == "heuristic-v1", (key, row)


def test_every_judged_row_is_labelled_with_the_heuristic(chinese_run) -> None:
    judged = chinese_run["scores"].filter(pl.col("judge") != "none")
    assert judged.height > 30 and set(judged["judge"]) == {"heuristic-v1"}
    assert chinese_run["scores"].filter(pl.col("value").is_null() & pl.col("na_reason").is_null()).height == 0


def test_report_judgments_carry_the_language_reason(chinese_run) -> None:
    failed = chinese_run["judgments"].filter(pl.col("na_reason").is_not_null()
                                             & (pl.col("na_reason") != "data_accessibility"))  # no trace: not language
    assert set(failed["kind"]) == {"rubric", "contradictions", "pairwise", "flae", "criteria", "trace_weights"}
    assert set(failed["na_reason"]) == {"pipeline_failure"}
    # MMDR's TRACE weights are beyond the offline judge in any language: a judge limit that says so
    language = failed.filter(pl.col("kind") != "trace_weights")
    assert set(language["reason"]) == {ZH_DOES_NOT_READ}
    assert all("judge limit: the offline judge cannot set TRACE" in r
               for r in failed.filter(pl.col("kind") == "trace_weights")["reason"])


def test_japanese_report_is_not_read_anywhere_and_says_so() -> None:
    task = Task(key="tvir.ja-ev", benchmark="tvir", original_id="ja-ev", language="ja", query="日本の電気自動車市場を分析せよ。",
                checklist=["2023年の販売台数を示しているか。"],
                sandbox=[SandboxPage(url="https://www.jada.example.jp/2024/ev", role="supportive", text=JAPANESE_PAGE)])
    out = run_stages([task], {("s", task.key): JAPANESE_REPORT}, extra_suites=())
    cited = out["verdicts"].filter(pl.col("origin") == "cited")
    assert cited.height == 2 and set(cited["na_reason"]) == {"pipeline_failure"}
    assert set(cited["reason"]) == {"judge limit: heuristic judge does not read Japanese (ja)"}
    found = rows(out["scores"])
    for metric in ("ia", "wq", "adb", "flc"):
        assert found[("tvir", metric)]["na_reason"] == "pipeline_failure", found[("tvir", metric)]
        assert "heuristic judge does not read Japanese (ja)" in found[("tvir", metric)]["detail"]


def test_batched_verdicts_leave_out_only_the_claims_they_cannot_read() -> None:
    report = REPORT.replace("## 三、充电基础设施", "## 三、充电基础设施\n\nExports of electric cars grew strongly to "
                            "Europe and South East Asia over the course of the year, the customs office said [1].\n")
    out = run_stages([TASK], {("s", TASK.key): report}, extra_suites=(), batch_size=8)
    cited = out["verdicts"].filter((pl.col("origin") == "cited") & (pl.col("source") == CAAM_URL))
    english = cited.filter(pl.col("na_reason").is_not_null())
    assert english.height == 1 and english["na_reason"][0] == "pipeline_failure"
    assert english["reason"][0].startswith("judge limit: heuristic judge does not compare texts across languages (claim in English")
    assert set(cited.filter(pl.col("na_reason").is_null())["verdict"]) == {"supported"}
    assert set(cited["batch_size"]) == {cited.height}  # one call for the whole group
