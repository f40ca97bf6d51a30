"""Inline citation markers: each form, and the things that must not count."""
from __future__ import annotations

import pytest

from dreval_assets.core.citation_markers import clean_url, parse_indices, tokenize_inline


def cited(markup: str, known: set[int] = frozenset()) -> list[tuple]:
    tokenized = tokenize_inline(markup, known)
    return [(c.indices, c.url, c.title) for c in tokenized.citations_in()]


@pytest.mark.parametrize(
    ("markup", "indices"),
    [
        ("Fact [3].", [3]),
        ("Fact [3, 5].", [3, 5]),
        ("Fact [3,5,7].", [3, 5, 7]),
        ("Fact [3-5].", [3, 4, 5]),
        ("Fact [3–5].", [3, 4, 5]),
        ("Fact [5-3].", [3, 4, 5]),
        ("Fact [1, 4-6; 9].", [1, 4, 5, 6, 9]),
        ("Fact [15†L10].", [15]),
        ("Fact 【15†L10-L20】.", [15]),
        ("Fact 【7】.", [7]),
        ('Fact <a href="#ref3">[3]</a>.', [3]),
        ('Fact <a href="#cite-note-12">12</a>.', [12]),
        ("Fact <sup>[3]</sup>.", [3]),
        ('Fact <sup><a href="#ref4">[4]</a></sup>.', [4]),
        ("Fact [^3].", [3]),
        ("Fact [3](#ref3).", [3]),
        # escaped by Markdown converters (html2text, pandoc)
        ("Fact \\[3\\].", [3]),
        ("Fact \\[3, 5\\].", [3, 5]),
        ("Fact \\[3].", [3]),
        ("Fact \\[^3\\].", [3]),
        ("Fact \\[15†L10\\].", [15]),
        ("Fact [\\[3\\]](https://a.example/x).", [3]),
        # full-width and superscript
        ("Fact 【3，5】.", [3, 5]),
        ("Fact ［3］.", [3]),
        ("Fact〔4〕.", [4]),
        ("Fact ^[3].", [3]),
        ("Fact^[3]^.", [3]),
        ("Fact<sup>3</sup>.", [3]),
        ("Fact <sup>2,3</sup>.", [2, 3]),
        ("Fact<sup> 4 </sup>.", [4]),
    ],
)
def test_numbered_marker_forms(markup, indices):
    tokenized = tokenize_inline(markup)
    assert [c.indices for c in tokenized.citations_in()] == [indices]
    assert tokenized.plain() == "Fact."


@pytest.mark.parametrize(
    "markup",
    [
        "- [x] done item",
        "- [ ] open item",
        "In [2023] the law passed.",
        "From [1990-2020] prices rose.",
        "![Chart 1](https://cdn.example/chart1.png)",
        "Run `arr[1]` now.",
        "Run <code>arr[2]</code> now.",
        "An escaped \\[2023\\] year.",
        "LaTeX display math \\[ x^2 \\] is not a marker.",
        "A named footnote[^note].",
        "[docs](./local/page.md)",
    ],
)
def test_not_citations(markup):
    assert cited(markup) == []


@pytest.mark.parametrize(
    ("markup", "plain"),
    [
        ("Chicago covers 606 km<sup>2</sup>.", "Chicago covers 606 km2."),
        ("A volume of 3 m<sup>3</sup> per second.", "A volume of 3 m3 per second."),
        ("About 10<sup>6</sup> cells.", "About 106 cells."),
        ("The term (x+1)<sup>2</sup> grows.", "The term (x+1)2 grows."),
    ],
)
def test_superscript_exponents_are_not_citations(markup, plain):
    tokenized = tokenize_inline(markup)
    assert tokenized.citations_in() == [] and tokenized.plain() == plain


def test_a_superscript_after_a_year_cites():
    tokenized = tokenize_inline("Sales rose in 2024<sup>4</sup>.")
    assert [c.indices for c in tokenized.citations_in()] == [[4]] and tokenized.plain() == "Sales rose in 2024."


def test_ipv6_literal_urls_are_urls():
    assert cited("Mirror at http://[2001:db8::1]/x/y?z=1.") == [([], "http://[2001:db8::1]/x/y?z=1", "")]
    assert cited("Port too: https://[2001:db8::1]:8443/a") == [([], "https://[2001:db8::1]:8443/a", "")]
    assert cited("Linked [mirror](http://[2001:db8::2]/m) copy.") == [([], "http://[2001:db8::2]/m", "mirror")]
    assert cited("Bare host http://[::1]") == [([], "http://[::1]", "")]


def test_year_is_a_citation_only_when_the_reference_exists():
    assert cited("In [2023] it passed.", known={2023}) == [([2023], None, "")]


def test_absurd_range_is_refused_with_warning():
    tokenized = tokenize_inline("Everything agrees [1-200].")
    assert tokenized.citations_in() == []
    assert tokenized.plain() == "Everything agrees [1-200]."
    assert tokenized.warnings == ["citation range [1-200] spans more than 50 sources: ignored"]


def test_partially_absurd_marker_keeps_the_sane_part():
    warnings: list[str] = []
    assert parse_indices("2, 10-90", set(), warnings) == [2]
    assert len(warnings) == 1


def test_inline_link_keeps_title_and_drops_url():
    tokenized = tokenize_inline("Per [the *IEA* report](https://www.iea.org/reports/x), demand rose.")
    assert [(c.url, c.title, c.marker) for c in tokenized.citations_in()] == [
        ("https://www.iea.org/reports/x", "the IEA report", "[the *IEA* report](https://www.iea.org/reports/x)")
    ]
    assert tokenized.plain() == "Per the IEA report, demand rose."


def test_link_with_parentheses_in_url():
    assert cited("See [Wiki](https://en.wikipedia.org/wiki/Mercury_(planet)).") == [
        ([], "https://en.wikipedia.org/wiki/Mercury_(planet)", "Wiki")
    ]


def test_bare_url_trailing_punctuation_is_not_part_of_url():
    assert cited("Source: https://example.com/a/b.") == [([], "https://example.com/a/b", "")]
    assert cited("(see https://example.com/x)") == [([], "https://example.com/x", "")]
    assert cited("来源：https://example.cn/news。") == [([], "https://example.cn/news", "")]


def test_url_inside_html_attribute_is_not_cited():
    assert cited('<iframe src="https://video.example/embed/1"></iframe> Watch it.') == []


def test_html_link_with_url_text_is_invisible():
    tokenized = tokenize_inline('Data: <a href="https://d.example/x">https://d.example/x</a>.')
    assert [(c.url, c.title) for c in tokenized.citations_in()] == [("https://d.example/x", "")]
    assert tokenized.plain() == "Data:."


def test_images_are_recorded_not_cited():
    tokenized = tokenize_inline('Look ![Sales chart](img/s.png) and <img src="a.png" alt="Map">.')
    assert [(t.image_alt, t.image_src) for t in tokenized.images()] == [("Sales chart", "img/s.png"), ("Map", "a.png")]
    assert tokenized.citations_in() == []
    assert tokenized.plain() == "Look and."


def test_clean_url():
    assert clean_url("https://a.example/x).") == "https://a.example/x"
    assert clean_url("https://a.example/f_(x)") == "https://a.example/f_(x)"
    assert clean_url("https://") == ""


def test_dr3_named_sources_become_locators_the_sandbox_resolves():
    from dreval_assets.core.models import SandboxPage
    from dreval_assets.core.report_parser import parse_report
    from dreval_assets.fetch.sandbox import SandboxFetcher

    report = parse_report(
        "# Notes\n\nInstallations in the valley tripled between 2021 and 2023 "
        "[long_context: \"Valley rebate programme results\", chunk 2].\n"
        "Moss cover reached 60 percent in the restored plots [Doc: Field_Notes.txt, Page 1].\n"
        "Tea exports fell by eighteen percent in the last season [RAG-3].\n"
        "The export chart shows the same decline over the decade [Image: export_chart.png].\n")
    urls = [c.urls for c in report.claims]
    assert urls == [["doc:Valley rebate programme results"], ["attachment:Field_Notes.txt"], ["rag:3"],
                    ["attachment:export_chart.png"]]
    assert "[RAG-3]" not in report.claims[2].text and report.has_inline_citations
    sandbox = [SandboxPage(url="doc:Valley rebate programme results", title="Valley rebate programme results",
                           role="supportive", text="Installations tripled."),
               SandboxPage(url="attachment:datasets_en/2/field_notes.txt", title="datasets_en/2/field_notes.txt",
                           role="attachment", text="Plot 4: moss cover back to 60 percent.")]
    found = SandboxFetcher().fetch_many([u for [u] in urls], sandbox)
    assert [r.status for r in found] == ["ok", "ok", "unknown", "unknown"]
    assert found[1].final_url == "attachment:datasets_en/2/field_notes.txt"  # matched by file name
    assert "trace" in found[2].detail and "vision" in found[3].detail


@pytest.mark.parametrize("markup", [
    "Revenue rose 12% to $4.1 billion in 2023, the company said.",
    "营收同比增长１２％，达到４１亿元（2023年）。",
    "A sentence with *emphasis*, __strong__ words and an escaped \\* star.",
    "Fact [3] and fact 【7】 and ［2］ and 〔4〕.",
    "See https://example.org/a?b=1 and HTTP://EXAMPLE.ORG too.",
    "Code `x = 1` and <b>bold</b> and &amp; entities.",
])
def test_text_without_markup_goes_through_as_the_full_tokenizer_reads_it(markup):
    """The tokenizer skips its patterns for text holding none of the characters they need (most
    statements): what it gives is what running them all gives."""
    from dreval_assets.core.citation_markers import _Tokenizer

    fast, full = tokenize_inline(markup), _Tokenizer(set()).run(markup)
    assert (fast.text, len(fast.tokens), fast.warnings) == (full.text, len(full.tokens), full.warnings)
    assert fast.plain() == full.plain()
