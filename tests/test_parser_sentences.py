"""Sentence splitting and text cleanup, through the tokenizer as the parser uses them."""
from __future__ import annotations

import pytest

from dreval_assets.core.citation_markers import tokenize_inline
from dreval_assets.core.sentences import clean_inline_text, split_sentences, strip_emphasis, tidy_whitespace


def sentences(markup: str) -> list[str]:
    tokenized = tokenize_inline(markup)
    return [tokenized.plain(fragment) for fragment in split_sentences(tokenized.text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Growth was 3.5% in 2023. Costs fell.", ["Growth was 3.5% in 2023.", "Costs fell."]),
        ("Fruits, e.g. apples, sell well. Vegetables do not.", ["Fruits, e.g. apples, sell well.", "Vegetables do not."]),
        ("Use i.e. the median. Then stop.", ["Use i.e. the median.", "Then stop."]),
        ("Smith et al. found a 2% gain. Others disagree.", ["Smith et al. found a 2% gain.", "Others disagree."]),
        ("The U.S. Congress voted. It passed.", ["The U.S. Congress voted.", "It passed."]),
        ("Dr. Chen leads the lab. Prof. Li funds it.", ["Dr. Chen leads the lab.", "Prof. Li funds it."]),
        ("See Fig. 3 for details. No. 5 ranked last.", ["See Fig. 3 for details.", "No. 5 ranked last."]),
        ("Apple vs. Samsung is close. Huawei trails.", ["Apple vs. Samsung is close.", "Huawei trails."]),
        ("Version 2.1.3 fixed it. Version 3.0 broke it.", ["Version 2.1.3 fixed it.", "Version 3.0 broke it."]),
        ("J. K. Rowling wrote it. Sales soared.", ["J. K. Rowling wrote it.", "Sales soared."]),
        ("Prices rose approx. twice as fast. Wages lagged.", ["Prices rose approx. twice as fast.", "Wages lagged."]),
        ("Is it safe? Yes! It is.", ["Is it safe?", "Yes!", "It is."]),
        ('He said "it works." Then he left.', ['He said "it works."', "Then he left."]),
        ("**Revenue doubled.** Profit fell.", ["Revenue doubled.", "Profit fell."]),
        ("Wait... Nothing happened.", ["Wait...", "Nothing happened."]),
        ("The answer is no. Then we moved on.", ["The answer is no.", "Then we moved on."]),
        ("收入增长了15%。利润下降了！原因是什么？", ["收入增长了15%。", "利润下降了！", "原因是什么？"]),
    ],
)
def test_split_sentences(text, expected):
    assert sentences(text) == expected


def test_urls_do_not_split_sentences():
    assert sentences("Data from https://www.census.gov/data.html shows growth. It is official.") == [
        "Data from shows growth.", "It is official."
    ]


def test_marker_after_full_stop_belongs_to_previous_sentence():
    tokenized = tokenize_inline("Sales rose 5%.[3] Costs fell. [4] Margins held [5].")
    fragments = split_sentences(tokenized.text)
    assert [tokenized.plain(f) for f in fragments] == ["Sales rose 5%.", "Costs fell.", "Margins held."]
    assert [[c.indices for c in tokenized.citations_in(f)] for f in fragments] == [[[3]], [[4]], [[5]]]


def test_markers_with_periods_inside_are_not_split():
    tokenized = tokenize_inline("See the source [Rep. No. 5](https://a.example/r.5). Done.")
    assert [tokenized.plain(f) for f in split_sentences(tokenized.text)] == ["See the source Rep. No. 5.", "Done."]


def test_newline_is_a_hard_break():
    assert split_sentences("First line without stop\nSecond line") == ["First line without stop", "Second line"]


def test_strip_emphasis_keeps_arithmetic_and_snake_case():
    assert strip_emphasis("**bold** and *it* and _em_ and ~~gone~~") == "bold and it and em and gone"
    assert strip_emphasis("2 * 3 = 6 and snake_case_name") == "2 * 3 = 6 and snake_case_name"


def test_tidy_whitespace_repairs_marker_gaps():
    assert tidy_whitespace("Growth  was 5% .") == "Growth was 5%."
    assert tidy_whitespace("as shown , , and more .") == "as shown, and more."
    assert tidy_whitespace("Rates rose (see ) sharply.") == "Rates rose sharply."
    assert tidy_whitespace("Listed, .") == "Listed."


def test_clean_inline_text_strips_html_and_escapes():
    assert clean_inline_text("<b>Bold</b> &amp; <i>italic</i> \\*not emphasis\\*") == "Bold & italic *not emphasis*"
