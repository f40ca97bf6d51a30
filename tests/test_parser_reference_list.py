"""Reference list entry styles, headings and labels."""
from __future__ import annotations

import pytest

from dreval_assets.core.models import Reference
from dreval_assets.core.reference_list import (
    drop_duplicates,
    is_reference_label,
    is_reference_title,
    parse_reference_entries,
)

URL = "https://a.example/x"


@pytest.mark.parametrize(
    "line",
    [
        f"[1] Title of page {URL}",
        f"[1] {URL} - Title of page",
        f"[1] Title of page. <{URL}>",
        f"1. Title of page - {URL}",
        f"1. [Title of page]({URL})",
        f"- [1] [Title of page]({URL})",
        f'<a id="ref1"></a> [1] Title of page {URL}',
        f'<li id="ref1">Title of page {URL}</li>',
        f"[^1]: Title of page {URL}",
        f"[1]: {URL} Title of page",
        f"1) Title of page, {URL}",
        f"(1) \"Title of page\" {URL}",
        f"【1】Title of page {URL}",
        f'[1] <a href="{URL}">Title of page</a>',
        f"[1] Title of page. Retrieved from {URL}",
    ],
)
def test_entry_styles(line):
    assert parse_reference_entries([line]) == [Reference(index=1, url=URL, title="Title of page")]


def test_entry_without_url_is_kept():
    assert parse_reference_entries(["[4] Personal interview with the author, 2024"]) == [
        Reference(index=4, url=None, title="Personal interview with the author, 2024")
    ]


def test_url_on_continuation_line():
    lines = ["[2] World Bank, Global Economic Prospects, June 2024", "    https://www.worldbank.org/gep"]
    assert parse_reference_entries(lines) == [
        Reference(index=2, url="https://www.worldbank.org/gep", title="World Bank, Global Economic Prospects, June 2024")
    ]


def test_plain_list_items_are_numbered_by_position():
    lines = ["<ol>", "<li>First source https://one.example</li>", "<li>Second source https://two.example</li>", "</ol>"]
    assert [(r.index, r.url, r.title) for r in parse_reference_entries(lines)] == [
        (1, "https://one.example", "First source"), (2, "https://two.example", "Second source")
    ]


def test_text_after_a_complete_entry_is_not_appended():
    lines = ["[1] Alpha https://alpha.example", "All sources were accessed in May 2024."]
    assert parse_reference_entries(lines) == [Reference(index=1, url="https://alpha.example", title="Alpha")]


def test_title_words_like_link_are_kept_without_url():
    assert parse_reference_entries(["[^2]: Python Packaging Guide, no link"])[0].title == "Python Packaging Guide, no link"


def test_drop_duplicates():
    kept, warnings = drop_duplicates([Reference(index=1, url="https://a"), Reference(index=1, url="https://b")])
    assert kept == [Reference(index=1, url="https://a")]
    assert warnings == ["duplicate reference index 1: kept the first entry"]


@pytest.mark.parametrize(
    "title",
    ["References", "references", "REFERENCES", "Sources", "Bibliography", "Works Cited", "Citations",
     "参考文献", "参考资料", "7. References", "**Sources:**", "VII. Bibliography", "Reference List"],
)
def test_reference_titles(title):
    assert is_reference_title(title)


@pytest.mark.parametrize("title", ["Sources of error", "Reference class forecasting", "Introduction", ""])
def test_not_reference_titles(title):
    assert not is_reference_title(title)


def test_reference_labels():
    assert is_reference_label("References:")
    assert is_reference_label("**Sources:**")
    assert not is_reference_label("Sources: the survey relied on public filings from 2023.")
    assert not is_reference_label("## References")


def test_unnumbered_bullets_continue_the_numbering():
    lines = ["- Smith, J. (2020). Deep Work. Grand Central.", "- [OECD data portal](https://data.oecd.org/)"]
    assert [(r.index, r.url, r.title) for r in parse_reference_entries(lines)] == [
        (1, None, "Smith, J. (2020). Deep Work. Grand Central"),
        (2, "https://data.oecd.org/", "OECD data portal"),
    ]


def test_bracket_index_followed_by_a_dot():
    assert parse_reference_entries([f"[3]. Annual report. {URL}"]) == [Reference(index=3, url=URL, title="Annual report")]


def test_non_web_locators_are_kept_for_the_fetcher_to_refuse():
    from dreval_assets.core.reference_list import split_url_and_title

    assert split_url_and_title("Local file file:///etc/passwd") == ("file:///etc/passwd", "Local file")
    assert split_url_and_title("Archive - ftp://files.example/a.pdf.") == ("ftp://files.example/a.pdf", "Archive")
    assert split_url_and_title("Plain title only") == (None, "Plain title only")


@pytest.mark.parametrize(
    ("line", "indices"),
    [
        (f"[1] [4] [6] [13] Title of page / {URL}", [1, 4, 6, 13]),
        (f"[1][4] {URL}", [1, 4]),
        (f"[1, 4] Title of page {URL}", [1, 4]),
        (f"【3】【4】Title of page {URL}", [3, 4]),
        (f"\\[1\\] \\[4\\] Title of page / {URL}", [1, 4]),
        (f"- [2] [2] Title of page {URL}", [2]),
    ],
)
def test_one_source_under_several_indices(line, indices):
    references = parse_reference_entries([line])
    assert [r.index for r in references] == indices
    assert {(r.url, r.title) for r in references} <= {(URL, "Title of page"), (URL, "")}


def test_a_bracketed_year_after_the_index_is_not_an_index():
    assert [(r.index, r.title) for r in parse_reference_entries([f"[1] [2023] Annual report {URL}"])] == [
        (1, "[2023] Annual report")]


def test_a_bracketed_link_title_after_the_index_is_the_title():
    assert parse_reference_entries([f"[1] [2]({URL})"]) == [Reference(index=1, url=URL, title="2")]


@pytest.mark.parametrize("line", [f"\\[1\\] Title of page {URL}", f"1\\. Title of page {URL}"])
def test_entries_escaped_by_a_converter(line):
    assert parse_reference_entries([line]) == [Reference(index=1, url=URL, title="Title of page")]


def test_a_later_entry_with_a_url_replaces_one_without():
    kept, warnings = drop_duplicates([Reference(index=5, title="Gazette"), Reference(index=5, url="https://g.example")])
    assert kept == [Reference(index=5, url="https://g.example")]
    assert warnings == ["duplicate reference index 5: kept the later entry, the first has no URL"]
    assert drop_duplicates([Reference(index=1, url="https://a"), Reference(index=1, url="https://a")]) == (
        [Reference(index=1, url="https://a")], [])


def test_unnumbered_entries_can_start_after_a_given_index():
    assert [r.index for r in parse_reference_entries(["Sources: https://a.example, https://b.example"], after=7)] == [8, 9]
