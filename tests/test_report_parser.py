"""End-to-end tests of the report parser on realistic report shapes."""
from __future__ import annotations

import random

import pytest

from dreval_assets.core.models import ParsedReport
from dreval_assets.core.report_parser import is_checkable_fact, parse_report


def claim_rows(report: ParsedReport) -> list[tuple]:
    return [(c.kind, c.text, c.citation_indices, c.urls, c.unresolved_indices) for c in report.claims]


def titles(report: ParsedReport) -> list[tuple[str, int]]:
    return [(s.title, s.level) for s in report.sections]


def refs(report: ParsedReport) -> list[tuple]:
    return [(r.index, r.url, r.title) for r in report.references]


# --------------------------------------------------------------------------- Markdown with [n]

MARKDOWN_REPORT = """\
# The State of Offshore Wind in 2024

Offshore wind is growing quickly but unevenly.

## Capacity

Global offshore wind capacity reached 75 GW at the end of 2023 [1]. China installed more than half of the new capacity [2][3].
The U.S. market stalled after several project cancellations, e.g. Empire Wind 2 [4]. Costs rose by 20% vs. 2021 levels.[1]

## Outlook

- Analysts expect 380 GW by 2032 [2, 3].
- Supply chains remain tight.
- Is the target realistic?

## References

[1] GWEC Global Offshore Wind Report 2024 https://gwec.net/global-offshore-wind-report-2024/
[2] https://www.iea.org/reports/renewables-2023 - IEA Renewables 2023
[3] BloombergNEF. <https://about.bnef.com/offshore-wind-outlook>
[4] Reuters: Equinor cancels Empire Wind 2 contract https://www.reuters.com/business/energy/empire-wind-2
"""


def test_markdown_report_sections_and_references():
    report = parse_report(MARKDOWN_REPORT)
    assert titles(report) == [
        ("The State of Offshore Wind in 2024", 1), ("Capacity", 2), ("Outlook", 2), ("References", 2)
    ]
    assert report.sections[0].text == "Offshore wind is growing quickly but unevenly."
    assert report.sections[3].text.startswith("[1] GWEC Global Offshore Wind Report 2024")
    assert refs(report) == [
        (1, "https://gwec.net/global-offshore-wind-report-2024/", "GWEC Global Offshore Wind Report 2024"),
        (2, "https://www.iea.org/reports/renewables-2023", "IEA Renewables 2023"),
        (3, "https://about.bnef.com/offshore-wind-outlook", "BloombergNEF"),
        (4, "https://www.reuters.com/business/energy/empire-wind-2", "Reuters: Equinor cancels Empire Wind 2 contract"),
    ]
    assert report.has_reference_list and report.has_inline_citations
    assert report.unresolved_indices == []
    assert report.warnings == []


def test_markdown_report_claims():
    report = parse_report(MARKDOWN_REPORT)
    gwec, iea, bnef = (
        "https://gwec.net/global-offshore-wind-report-2024/",
        "https://www.iea.org/reports/renewables-2023",
        "https://about.bnef.com/offshore-wind-outlook",
    )
    reuters = "https://www.reuters.com/business/energy/empire-wind-2"
    assert claim_rows(report) == [
        ("sentence", "Global offshore wind capacity reached 75 GW at the end of 2023.", [1], [gwec], []),
        ("sentence", "China installed more than half of the new capacity.", [2, 3], [iea, bnef], []),
        ("sentence", "The U.S. market stalled after several project cancellations, e.g. Empire Wind 2.",
         [4], [reuters], []),
        ("sentence", "Costs rose by 20% vs. 2021 levels.", [1], [gwec], []),
        ("sentence", "Analysts expect 380 GW by 2032.", [2, 3], [iea, bnef], []),
    ]
    assert [c.claim_id for c in report.claims] == ["c0001", "c0002", "c0003", "c0004", "c0005"]
    assert [c.section for c in report.claims] == ["Capacity"] * 4 + ["Outlook"]


def test_markdown_report_sentences_exclude_headings_and_references():
    report = parse_report(MARKDOWN_REPORT)
    assert report.sentences == [
        "Offshore wind is growing quickly but unevenly.",
        "Global offshore wind capacity reached 75 GW at the end of 2023.",
        "China installed more than half of the new capacity.",
        "The U.S. market stalled after several project cancellations, e.g. Empire Wind 2.",
        "Costs rose by 20% vs. 2021 levels.",
        "Analysts expect 380 GW by 2032.",
        "Supply chains remain tight.",
        "Is the target realistic?",
    ]
    assert [c.marker for c in report.citations] == ["[1]", "[2]", "[3]", "[4]", "[1]", "[2, 3]"]


# --------------------------------------------------------------------------- TVIR-style HTML

TVIR_REPORT = """\
<h1>Grid-Scale Battery Storage in Europe</h1>

<p>Germany's installed battery storage doubled to 6.5 GWh in 2023 <a href="#ref1">[1]</a>. Italy added 1.2 GW of new capacity<sup>[2]</sup>.</p>

<figure>
  <img src="images/storage_by_country.png" alt="Bar chart of storage capacity">
  <figcaption>Installed storage by country, 2020-2023 <a href="#ref2">[2]</a></figcaption>
</figure>

<h2>Drivers</h2>
<p>Falling cell prices are the main driver <sup><a href="#ref3">[3]</a></sup>.</p>

<h2>References</h2>
<a id="ref1"></a> [1] Fraunhofer ISE Energy-Charts https://www.energy-charts.info/charts/storage
<a id="ref2"></a> [2] SolarPower Europe, European Market Outlook for Battery Storage https://www.solarpowereurope.org/storage-2024
<a id="ref3"></a> [3] BNEF Battery Price Survey https://about.bnef.com/battery-price-survey
"""


def test_tvir_html_report():
    report = parse_report(TVIR_REPORT)
    assert titles(report) == [
        ("Grid-Scale Battery Storage in Europe", 1), ("Drivers", 2), ("References", 2)
    ]
    assert refs(report) == [
        (1, "https://www.energy-charts.info/charts/storage", "Fraunhofer ISE Energy-Charts"),
        (2, "https://www.solarpowereurope.org/storage-2024",
         "SolarPower Europe, European Market Outlook for Battery Storage"),
        (3, "https://about.bnef.com/battery-price-survey", "BNEF Battery Price Survey"),
    ]
    storage, spe, bnef = (r.url for r in report.references)
    assert claim_rows(report) == [
        ("sentence", "Germany's installed battery storage doubled to 6.5 GWh in 2023.", [1], [storage], []),
        ("sentence", "Italy added 1.2 GW of new capacity.", [2], [spe], []),
        ("figure_caption", "Installed storage by country, 2020-2023", [2], [spe], []),
        ("sentence", "Falling cell prices are the main driver.", [3], [bnef], []),
    ]
    assert [f.model_dump() for f in report.figures] == [{
        "caption": "Installed storage by country, 2020-2023",
        "src": "images/storage_by_country.png",
        "citation_indices": [2],
        "section": "Grid-Scale Battery Storage in Europe",
    }]
    assert report.citations[0].marker == '<a href="#ref1">[1]</a>'
    assert report.warnings == []


def test_html_list_reference_entries_with_ids():
    report = parse_report(
        "# Note\n\nThe hub moved in 2022 [2].\n\n## Sources\n<ol>\n"
        '<li id="ref1">City council minutes https://city.example/minutes</li>\n'
        '<li id="ref2">Local news report https://news.example/hub</li>\n</ol>\n'
    )
    assert refs(report) == [
        (1, "https://city.example/minutes", "City council minutes"),
        (2, "https://news.example/hub", "Local news report"),
    ]
    assert claim_rows(report) == [("sentence", "The hub moved in 2022.", [2], ["https://news.example/hub"], [])]


# --------------------------------------------------------------------------- MMDR-style

MMDR_REPORT = """\
## Smartphone Market Overview

Apple shipped 234 million iPhones in 2023 [1]. Samsung remained close behind with 226 million units [2].

Figure 1: Global smartphone shipments by vendor, 2023 [3]

![Figure 1](file:///data/mmdr/task_17/fig1.png)

The chart shows a consolidated top tier [3].

References:
[1] https://www.idc.com/getdoc.jsp?containerId=prUS51776424
[2] https://www.counterpointresearch.com/insights/global-smartphone-share/
[3] https://www.canalys.com/newsroom/worldwide-smartphone-market-2023
"""


def test_mmdr_report_figure_merge_and_references():
    report = parse_report(MMDR_REPORT)
    idc, counterpoint, canalys = (
        "https://www.idc.com/getdoc.jsp?containerId=prUS51776424",
        "https://www.counterpointresearch.com/insights/global-smartphone-share/",
        "https://www.canalys.com/newsroom/worldwide-smartphone-market-2023",
    )
    assert refs(report) == [(1, idc, ""), (2, counterpoint, ""), (3, canalys, "")]
    assert [f.model_dump() for f in report.figures] == [{
        "caption": "Figure 1: Global smartphone shipments by vendor, 2023",
        "src": "file:///data/mmdr/task_17/fig1.png",
        "citation_indices": [3],
        "section": "Smartphone Market Overview",
    }]
    assert claim_rows(report) == [
        ("sentence", "Apple shipped 234 million iPhones in 2023.", [1], [idc], []),
        ("sentence", "Samsung remained close behind with 226 million units.", [2], [counterpoint], []),
        ("figure_caption", "Figure 1: Global smartphone shipments by vendor, 2023", [3], [canalys], []),
        ("sentence", "The chart shows a consolidated top tier.", [3], [canalys], []),
    ]
    # The "References:" block is not body text: no sentences, no markers from it.
    assert all("idc.com" not in s for s in report.sentences)
    assert len(report.citations) == 4
    assert titles(report) == [("Smartphone Market Overview", 2)]


def test_figure_caption_line_without_image_is_a_sentence():
    report = parse_report("Figure 2: Prices fell in 2023 [1].\n\nReferences:\n[1] https://a.example/p\n")
    assert report.figures == []
    assert claim_rows(report) == [("sentence", "Figure 2: Prices fell in 2023.", [1], ["https://a.example/p"], [])]


# --------------------------------------------------------------------------- DeepResearch-Bench style

DRB_REPORT = """\
Okay, I will research heat pump adoption in Europe.
Searching for "heat pump sales Europe 2023"...
I found several sources.

# Heat Pump Adoption in Europe

Heat pump sales in Europe fell by 5% in 2023 【15†L10-L20】. Poland saw the steepest decline [3†L4]. Norway still has the most heat pumps per household【4†source】.

## Why sales slowed

Lower gas prices reduced the incentive to switch [15†L33-L40]【3†L2】.
"""


def test_drb_dagger_markers_and_agent_chatter():
    report = parse_report(DRB_REPORT)
    assert titles(report) == [("", 0), ("Heat Pump Adoption in Europe", 1), ("Why sales slowed", 2)]
    assert report.sections[0].text.startswith("Okay, I will research")
    assert claim_rows(report) == [
        ("sentence", "Heat pump sales in Europe fell by 5% in 2023.", [15], [], [15]),
        ("sentence", "Poland saw the steepest decline.", [3], [], [3]),
        ("sentence", "Norway still has the most heat pumps per household.", [4], [], [4]),
        ("sentence", "Lower gas prices reduced the incentive to switch.", [3, 15], [], [3, 15]),
    ]
    # The agent's narration ("Okay, I will research ... Europe.") is not a claim.
    assert report.sentences[0] == "Okay, I will research heat pump adoption in Europe."
    assert [c.marker for c in report.citations] == [
        "【15†L10-L20】", "[3†L4]", "【4†source】", "[15†L33-L40]", "【3†L2】"
    ]
    assert report.unresolved_indices == [3, 4, 15]
    assert not report.has_reference_list and report.has_inline_citations
    assert any("no reference list" in w for w in report.warnings)


# --------------------------------------------------------------------------- links and bare URLs

LINKS_REPORT = """\
# Remote Work in 2024

According to [Gallup's State of the Workplace](https://www.gallup.com/workplace/state.aspx), 29% of US employees work fully remotely.
The Bureau of Labor Statistics publishes comparable figures at https://www.bls.gov/news.release/atus.htm.
Office occupancy stayed near 50% (see https://www.kastle.com/safety-wellness/getting-america-back-to-work/).
A short note with [an internal link](./appendix.md) only.
"""


def test_inline_links_and_bare_urls():
    report = parse_report(LINKS_REPORT)
    gallup = "https://www.gallup.com/workplace/state.aspx"
    bls = "https://www.bls.gov/news.release/atus.htm"
    kastle = "https://www.kastle.com/safety-wellness/getting-america-back-to-work/"
    assert claim_rows(report) == [
        ("sentence", "According to Gallup's State of the Workplace, 29% of US employees work fully remotely.",
         [], [gallup], []),
        ("sentence", "The Bureau of Labor Statistics publishes comparable figures at.", [], [bls], []),
        ("sentence", "Office occupancy stayed near 50%.", [], [kastle], []),
    ]
    assert [(c.url, c.title, c.indices) for c in report.citations] == [
        (gallup, "Gallup's State of the Workplace", []), (bls, "", []), (kastle, "", []),
    ]
    assert report.sentences[-1] == "A short note with an internal link only."
    assert report.has_inline_citations and not report.has_reference_list
    assert report.unresolved_indices == []


def test_html_links_and_autolinks_are_url_citations():
    report = parse_report(
        'Sales rose 8% in Q2 per <a href="https://ir.example.com/q2">the Q2 filing</a>. '
        "Details at <https://ir.example.com/q2-detail>.\n"
    )
    assert claim_rows(report) == [
        ("sentence", "Sales rose 8% in Q2 per the Q2 filing.", [], ["https://ir.example.com/q2"], []),
        ("sentence", "Details at.", [], ["https://ir.example.com/q2-detail"], []),
    ]


# --------------------------------------------------------------------------- ranges and lists

RANGES_REPORT = """\
# Euro Area Inflation

Headline inflation fell to 2.4% in April 2024 [3-5]. Core inflation stayed at 2.7% [2, 7].
Services prices rose 3.7% [3–5,7]. Energy prices fell [1-99].

## Sources
1. ECB Economic Bulletin - https://www.ecb.europa.eu/pub/economic-bulletin/
2. [Eurostat flash estimate](https://ec.europa.eu/eurostat/web/products-euro-indicators)
3. Reuters inflation coverage https://www.reuters.com/markets/europe/inflation
4. FT analysis https://www.ft.com/content/euro-inflation
5. Bloomberg Economics https://www.bloomberg.com/economics/euro
7. IMF Regional Outlook https://www.imf.org/en/Publications/REO/EU
"""


def test_ranges_and_lists_expand():
    report = parse_report(RANGES_REPORT)
    urls = {r.index: r.url for r in report.references}
    assert sorted(urls) == [1, 2, 3, 4, 5, 7]
    assert claim_rows(report) == [
        ("sentence", "Headline inflation fell to 2.4% in April 2024.", [3, 4, 5], [urls[3], urls[4], urls[5]], []),
        ("sentence", "Core inflation stayed at 2.7%.", [2, 7], [urls[2], urls[7]], []),
        ("sentence", "Services prices rose 3.7%.", [3, 4, 5, 7], [urls[3], urls[4], urls[5], urls[7]], []),
    ]  # "Energy prices fell [1-99]." keeps its refused marker and is too short to be a claim
    assert report.citations[0].indices == [3, 4, 5]
    assert report.citations[2].marker == "[3–5,7]"
    assert any("[1-99]" in w and "50" in w for w in report.warnings)
    assert report.sentences[-1] == "Energy prices fell [1-99]."


def test_range_of_exactly_fifty_is_allowed():
    report = parse_report("Many sources agree on this [1-50].")
    assert report.claims[0].citation_indices == list(range(1, 51))
    assert not any("spans more than" in w for w in report.warnings)


# --------------------------------------------------------------------------- bibliography only

BIBLIOGRAPHY_ONLY = """\
# Coffee Consumption Worldwide

Finland drinks the most coffee per person, about 12 kg a year.
Brazil produces roughly a third of the world's coffee.
Prices doubled between 2020 and 2022.

## Bibliography

- [1] [International Coffee Organization statistics](https://www.ico.org/trade_statistics.asp)
- [2] [USDA Coffee: World Markets and Trade](https://fas.usda.gov/data/coffee-world-markets-and-trade)
"""


def test_bibliography_without_inline_markers():
    report = parse_report(BIBLIOGRAPHY_ONLY)
    assert report.has_reference_list is True
    assert report.has_inline_citations is False
    assert refs(report) == [
        (1, "https://www.ico.org/trade_statistics.asp", "International Coffee Organization statistics"),
        (2, "https://fas.usda.gov/data/coffee-world-markets-and-trade", "USDA Coffee: World Markets and Trade"),
    ]
    assert report.citations == []
    assert claim_rows(report) == [
        ("uncited", "Finland drinks the most coffee per person, about 12 kg a year.", [], [], []),
        ("uncited", "Prices doubled between 2020 and 2022.", [], [], []),
    ]  # "Brazil produces ..." has no digit and no capitalised word after the first: not checkable
    assert any("no inline numbered marker" in w for w in report.warnings)


# --------------------------------------------------------------------------- markers, no references

def test_markers_without_reference_section_are_all_unresolved():
    report = parse_report(
        "# Lithium Prices\n\nLithium carbonate prices fell 80% in 2023 [1]. Chile and Australia supply most "
        "lithium [2][5].\n\n1. Prices may recover in 2025 [3].\n2. Demand keeps rising.\n"
    )
    assert report.references == [] and not report.has_reference_list
    assert claim_rows(report) == [
        ("sentence", "Lithium carbonate prices fell 80% in 2023.", [1], [], [1]),
        ("sentence", "Chile and Australia supply most lithium.", [2, 5], [], [2, 5]),
        ("sentence", "Prices may recover in 2025.", [3], [], [3]),
    ]
    assert report.unresolved_indices == [1, 2, 3, 5]
    assert "4 cited indices but no reference list: all are unresolved" in report.warnings


def test_numbered_list_without_references_heading_is_not_a_reference_list():
    report = parse_report(
        "# Steps\n\n1. Open https://portal.example.gov/apply and create an account.\n"
        "2. Upload the form from https://portal.example.gov/forms.\n"
    )
    assert report.references == []
    assert claim_rows(report) == [
        ("sentence", "Open and create an account.", [], ["https://portal.example.gov/apply"], []),
        ("sentence", "Upload the form from.", [], ["https://portal.example.gov/forms"], []),
    ]


def test_indices_without_url_entries_are_unresolved():
    report = parse_report(
        "Rents in Berlin rose 9% in 2023 [1]. Vacancy is below 1% [2, 3]. Construction fell [4].\n\n"
        "## References\n[1] Berlin Housing Report https://housing.example.de/2023\n"
        "[2] Interview with a city planner (unpublished)\n[3] Senate statistics office, 2024\n"
    )
    assert refs(report) == [
        (1, "https://housing.example.de/2023", "Berlin Housing Report"),
        (2, None, "Interview with a city planner (unpublished)"),
        (3, None, "Senate statistics office, 2024"),
    ]
    assert claim_rows(report) == [
        ("sentence", "Rents in Berlin rose 9% in 2023.", [1], ["https://housing.example.de/2023"], []),
        ("sentence", "Vacancy is below 1%.", [2, 3], [], [2, 3]),
        ("sentence", "Construction fell.", [4], [], [4]),
    ]
    assert report.unresolved_indices == [2, 3, 4]
    assert "cited indices without a URL in the reference list: [2, 3, 4]" in report.warnings


# --------------------------------------------------------------------------- degenerate input

@pytest.mark.parametrize("text", ["", "   \n\t\n  ", "\n\n\n"])
def test_empty_and_whitespace_reports(text):
    report = parse_report(text)
    assert report.sections == [] and report.claims == [] and report.sentences == []
    assert report.has_inline_citations is False and report.has_reference_list is False
    assert report.warnings == ["empty report: nothing to parse"]


def test_binary_looking_text_does_not_raise():
    text = bytes(range(256)).decode("latin-1") * 3
    report = parse_report(text)
    assert isinstance(report, ParsedReport)
    assert any("binary" in w for w in report.warnings)
    assert report.references == [] and report.unresolved_indices == []


@pytest.mark.parametrize("seed", range(8))
def test_random_markup_soup_never_raises(seed):
    rng = random.Random(seed)
    alphabet = ["[", "]", "(", ")", "1", "23", "2023", "-", "–", "|", "---", "`", "```", "#", "# ", "\n", " ",
                "<a href=\"#ref1\">", "</a>", "<figure>", "<table>", "<tr><td>", "https://x.example/a", "†",
                "【", "】", "References:", "## Sources\n", "![", "<img src=x>", "[^1]", "[^1]: ", ".", "。", "Word"]
    text = "".join(rng.choice(alphabet) for _ in range(3000))
    report = parse_report(text)
    assert isinstance(report, ParsedReport)
    assert not any("stopped early" in w for w in report.warnings)
    assert [c.claim_id for c in report.claims] == [f"c{i:04d}" for i in range(1, len(report.claims) + 1)]


def test_non_str_input_is_converted_with_a_warning():
    report = parse_report(b"Revenue grew 4% in 2023 [1].")  # type: ignore[arg-type]
    assert report.claims[0].text == "Revenue grew 4% in 2023."
    assert any("not str" in w for w in report.warnings)


def test_huge_report_is_truncated_with_warning(monkeypatch):
    import dreval_assets.core.report_parser as parser_module

    monkeypatch.setattr(parser_module, "MAX_REPORT_CHARS", 1000)
    report = parse_report("Tesla sold 1.8 million cars in 2023 [1]. " * 100)
    assert any("only the first 1000" in w for w in report.warnings)
    assert 0 < len(report.claims) <= 1000 // 40 + 1


def test_parser_is_deterministic():
    assert parse_report(MARKDOWN_REPORT) == parse_report(MARKDOWN_REPORT)
    assert parse_report(TVIR_REPORT).model_dump_json() == parse_report(TVIR_REPORT).model_dump_json()


# --------------------------------------------------------------------------- Chinese

CHINESE_REPORT = """\
# 中国电动汽车市场分析

2023年中国新能源汽车销量达到950万辆[1]。比亚迪的市场份额约为35%[2]！这一趋势能否持续？
行业整体保持高速增长。

## 参考文献
[1] 中国汽车工业协会 https://www.caam.org.cn/chn/4/cate_32/list_1.html
[2] 比亚迪2023年年报 https://www.bydglobal.com/cn/investor
"""


def test_chinese_report():
    report = parse_report(CHINESE_REPORT)
    caam, byd = (r.url for r in report.references)
    assert titles(report) == [("中国电动汽车市场分析", 1), ("参考文献", 2)]
    assert refs(report) == [
        (1, "https://www.caam.org.cn/chn/4/cate_32/list_1.html", "中国汽车工业协会"),
        (2, "https://www.bydglobal.com/cn/investor", "比亚迪2023年年报"),
    ]
    assert report.sentences == [
        "2023年中国新能源汽车销量达到950万辆。", "比亚迪的市场份额约为35%！", "这一趋势能否持续？", "行业整体保持高速增长。"
    ]
    assert claim_rows(report) == [
        ("sentence", "2023年中国新能源汽车销量达到950万辆。", [1], [caam], []),
        ("sentence", "比亚迪的市场份额约为35%！", [2], [byd], []),
    ]


# --------------------------------------------------------------------------- tables

TABLE_REPORT = """\
# Cloud Market Share

| Provider | Share (Q4 2023) | Source |
|:---------|----------------:|--------|
| **AWS** | 31% | [1] |
| Microsoft Azure | 24% [2] | |
| Google Cloud | 11% | |

<table>
<tr><th>Region</th><th>Growth</th></tr>
<tr><td>North America</td><td>18% <a href="#ref1">[1]</a></td></tr>
<tr><td>Europe</td><td>21%</td></tr>
</table>

## References
1. Synergy Research Group - https://www.srgresearch.com/articles/cloud-q4-2023
2. [Canalys cloud report](https://www.canalys.com/newsroom/cloud-q4-2023)
"""


def test_pipe_and_html_tables_with_cited_rows():
    report = parse_report(TABLE_REPORT)
    synergy, canalys = (r.url for r in report.references)
    assert [(t.header, t.rows, t.section) for t in report.tables] == [
        (["Provider", "Share (Q4 2023)", "Source"],
         [["AWS", "31%", ""], ["Microsoft Azure", "24%", ""], ["Google Cloud", "11%", ""]],
         "Cloud Market Share"),
        (["Region", "Growth"], [["North America", "18%"], ["Europe", "21%"]], "Cloud Market Share"),
    ]
    assert claim_rows(report) == [
        ("table_row", "Provider: AWS; Share (Q4 2023): 31%", [1], [synergy], []),
        ("table_row", "Provider: Microsoft Azure; Share (Q4 2023): 24%", [2], [canalys], []),
        ("table_row", "Region: North America; Growth: 18%", [1], [synergy], []),
    ]
    assert report.sentences == []


def test_pipe_with_escaped_bar_and_code_cell():
    report = parse_report("| Flag | Meaning |\n|---|---|\n| `a|b` | either a or b \\| both [1] |\n")
    assert report.tables[0].rows == [["a|b", "either a or b | both"]]
    assert report.claims[0].text == "Flag: a|b; Meaning: either a or b | both"


# --------------------------------------------------------------------------- code blocks

CODE_REPORT = """\
# Indexing in Python

Python lists are zero-indexed [1]. The call `values[1]` returns the second item.

```python
values = [10, 20, 30]
print(values[1])  # prints 20, see [2]
```

~~~
[3] this is not a reference line
~~~

<pre>
matrix[2][3] = 0
</pre>

## References
[1] Python tutorial https://docs.python.org/3/tutorial/introduction.html#lists
"""


def test_code_blocks_and_spans_are_ignored():
    report = parse_report(CODE_REPORT)
    assert [c.marker for c in report.citations] == ["[1]"]
    assert refs(report) == [(1, "https://docs.python.org/3/tutorial/introduction.html#lists", "Python tutorial")]
    assert claim_rows(report) == [
        ("sentence", "Python lists are zero-indexed.", [1],
         ["https://docs.python.org/3/tutorial/introduction.html#lists"], []),
        ("uncited", "The call values[1] returns the second item.", [], [], []),  # code text keeps its digit
    ]
    assert report.sentences == ["Python lists are zero-indexed.", "The call values[1] returns the second item."]
    assert report.unresolved_indices == []
    assert "values = [10, 20, 30]" in report.sections[0].text  # Section.text is the raw body


def test_unclosed_code_fence_warns():
    report = parse_report("Intro with a fact from 2020 [1].\n\n```\ncode [2]\n")
    assert [c.indices for c in report.citations] == [[1]]
    assert any("never closed" in w for w in report.warnings)


# --------------------------------------------------------------------------- footnotes

FOOTNOTE_REPORT = """\
# Coral Reefs

About half of the world's coral cover has been lost since 1950.[^1] Bleaching events are now more frequent[^2].
Reef tourism is worth $36 billion a year[^3][^note].

[^1]: Eddy et al., One Earth (2021) https://doi.org/10.1016/j.oneear.2021.08.016
[^2]: NOAA Coral Reef Watch https://coralreefwatch.noaa.gov/
[^3]: Spalding et al., Marine Policy, 2017
"""


def test_footnote_markers_and_definitions():
    report = parse_report(FOOTNOTE_REPORT)
    assert refs(report) == [
        (1, "https://doi.org/10.1016/j.oneear.2021.08.016", "Eddy et al., One Earth (2021)"),
        (2, "https://coralreefwatch.noaa.gov/", "NOAA Coral Reef Watch"),
        (3, None, "Spalding et al., Marine Policy, 2017"),
    ]
    assert claim_rows(report) == [
        ("sentence", "About half of the world's coral cover has been lost since 1950.", [1],
         ["https://doi.org/10.1016/j.oneear.2021.08.016"], []),
        ("sentence", "Bleaching events are now more frequent.", [2], ["https://coralreefwatch.noaa.gov/"], []),
        ("sentence", "Reef tourism is worth $36 billion a year.", [3], [], [3]),
    ]
    assert report.unresolved_indices == [3]
    assert len(report.sentences) == 3  # definitions are not body sentences


# --------------------------------------------------------------------------- not citations

def test_checkboxes_images_and_years_are_not_citations():
    report = parse_report(
        "# Plan\n\n- [x] Survey 120 households in Nairobi by March\n- [ ] Publish the results\n\n"
        "![Map of survey sites](images/map.png)\n\n"
        "The census of [2019] counted 4.4 million residents in Nairobi.\n"
    )
    assert report.citations == []
    assert report.figures[0].model_dump() == {
        "caption": "Map of survey sites", "src": "images/map.png", "citation_indices": [], "section": "Plan"
    }
    assert report.sentences == [
        "Survey 120 households in Nairobi by March",
        "Publish the results",
        "The census of [2019] counted 4.4 million residents in Nairobi.",
    ]
    assert [c.kind for c in report.claims] == ["uncited", "uncited"]


def test_large_number_is_a_citation_when_the_reference_exists():
    report = parse_report("A claim [1200].\n\n## References\n[1200] Big list https://big.example/1200\n")
    assert claim_rows(report) == [("sentence", "A claim.", [1200], ["https://big.example/1200"], [])]


# --------------------------------------------------------------------------- reference list details

def test_duplicate_reference_index_keeps_first():
    report = parse_report(
        "Fact one [1].\n\n## References\n[1] First https://first.example\n[1] Second https://second.example\n"
    )
    assert refs(report) == [(1, "https://first.example", "First")]
    assert "duplicate reference index 1: kept the first entry" in report.warnings
    assert report.claims[0].urls == ["https://first.example"]


def test_reference_section_markers_are_not_inline_citations():
    report = parse_report(
        "Claim text here [2].\n\n# Works Cited\n[1] Alpha, cited in [2] https://alpha.example\n"
        "[2] Beta https://beta.example\n"
    )
    assert [c.marker for c in report.citations] == ["[2]"]
    assert report.sentences == ["Claim text here."]


def test_references_label_line_in_plain_report():
    report = parse_report(
        "Global rice output hit 520 million tonnes in 2023 [1].\n\n**Sources:**\n"
        "- [FAO Rice Market Monitor](https://www.fao.org/markets-and-trade/rice)\n"
        "- [USDA Grain report](https://www.fas.usda.gov/data/grain-world-markets-and-trade)\n"
    )
    assert refs(report) == [
        (1, "https://www.fao.org/markets-and-trade/rice", "FAO Rice Market Monitor"),
        (2, "https://www.fas.usda.gov/data/grain-world-markets-and-trade", "USDA Grain report"),
    ]
    assert claim_rows(report) == [
        ("sentence", "Global rice output hit 520 million tonnes in 2023.", [1],
         ["https://www.fao.org/markets-and-trade/rice"], []),
    ]


def test_sources_heading_with_numbered_subsection():
    report = parse_report(
        "# Report\n\nA fact [2].\n\n## 6. References\n\n### Web\n1. Site A https://a.example\n"
        "2. Site B https://b.example\n\n## Appendix\n\nThe appendix lists 3 extra tables.\n"
    )
    assert refs(report) == [(1, "https://a.example", "Site A"), (2, "https://b.example", "Site B")]
    assert titles(report) == [("Report", 1), ("6. References", 2), ("Web", 3), ("Appendix", 2)]
    assert report.sentences == ["A fact.", "The appendix lists 3 extra tables."]


# --------------------------------------------------------------------------- sections

def test_html_and_atx_headings_with_closing_hashes():
    report = parse_report(
        "Preamble text.\n\n## Method ##\n\nWe surveyed 40 firms.\n\n<h3 id='r'>Results <em>so far</em></h3>\n\n"
        "#not a heading\n"
    )
    assert titles(report) == [("", 0), ("Method", 2), ("Results so far", 3)]
    assert [s.text for s in report.sections] == ["Preamble text.", "We surveyed 40 firms.", "#not a heading"]


def test_no_preamble_section_when_report_starts_with_heading():
    report = parse_report("# Title\n\nBody.")
    assert titles(report) == [("Title", 1)]


# --------------------------------------------------------------------------- claim rules

@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Revenue grew 12% in the third quarter.", True),        # digit, 7 words
        ("The report was written by the Ministry of Energy.", True),  # capitalised word, not first
        ("This is a rather long but vague sentence.", False),    # no digit, no proper noun
        ("Sales rose 5% overall.", False),                       # fewer than 6 words
        ("Did the Ministry publish data for 2023?", False),      # question
        ("I think this approach works quite well here.", False),  # "I" is not a proper noun
        ("欧洲的热泵销量在2023年下降了。", True),                  # CJK characters count as words
    ],
)
def test_uncited_claim_rule(sentence, expected):
    assert is_checkable_fact(sentence) is expected


def test_short_list_labels_and_questions_are_not_uncited_claims():
    report = parse_report(
        "## Key Points\n\n- Market size\n- Growth drivers in Asia\n- What will the EU decide in 2025?\n"
        "- The EU decided to ban combustion engines from 2035 onwards.\n"
    )
    assert claim_rows(report) == [
        ("uncited", "The EU decided to ban combustion engines from 2035 onwards.", [], [], []),
    ]


def test_claim_ids_follow_document_order_across_kinds():
    report = parse_report(
        "Intro claim from 2021 [1].\n\n| A | B |\n|---|---|\n| x | y [1] |\n\n"
        "Figure 1: Chart [1]\n![Figure 1](chart.png)\n\nClosing claim [1].\n\n## References\n[1] S https://s.example\n"
    )
    assert [(c.claim_id, c.kind) for c in report.claims] == [
        ("c0001", "sentence"), ("c0002", "table_row"), ("c0003", "figure_caption"), ("c0004", "sentence")
    ]


def test_emphasis_and_inline_code_are_stripped_from_claims():
    report = parse_report("**Nvidia** reported *record* revenue of `$60.9B` in fiscal 2024 [1].\n")
    assert report.claims[0].text == "Nvidia reported record revenue of $60.9B in fiscal 2024."


def test_link_citation_with_numeric_title_counts_as_both():
    report = parse_report(
        "Ocean heat content hit a record in 2023 [[1]](https://noaa.example/ohc).\n\n"
        "## References\n[1] NOAA https://noaa.example/ohc-report\n"
    )
    assert claim_rows(report) == [
        ("sentence", "Ocean heat content hit a record in 2023.", [1],
         ["https://noaa.example/ohc-report", "https://noaa.example/ohc"], []),
    ]


def test_standalone_html_image_and_figure_without_caption():
    report = parse_report(
        "## Maps\n\n"
        '<img src="maps/flood_zones.png" alt="Flood zones in Jakarta">\n\n'
        '<figure><img src="maps/subsidence.png" alt="Land subsidence rates [2]"></figure>\n\n'
        "## References\n[2] Subsidence study https://subsidence.example/jakarta\n"
    )
    assert [(f.caption, f.src, f.citation_indices, f.section) for f in report.figures] == [
        ("Flood zones in Jakarta", "maps/flood_zones.png", [], "Maps"),
        ("Land subsidence rates", "maps/subsidence.png", [2], "Maps"),
    ]
    assert claim_rows(report) == [
        ("figure_caption", "Land subsidence rates", [2], ["https://subsidence.example/jakarta"], []),
    ]
    assert report.sentences == []


def test_blockquotes_and_html_paragraph_breaks():
    report = parse_report(
        "> Wind supplied 19% of EU power in 2023 [1].\n\n<p>Solar output grew</p><p>Hydro output fell</p>\n\n"
        "References:\n[1] Ember European Electricity Review https://ember-climate.org/eer-2024\n"
    )
    assert report.sentences == ["Wind supplied 19% of EU power in 2023.", "Solar output grew", "Hydro output fell"]
    assert claim_rows(report)[0] == (
        "sentence", "Wind supplied 19% of EU power in 2023.", [1], ["https://ember-climate.org/eer-2024"], []
    )


def test_internal_failure_returns_partial_result_with_warning(monkeypatch):
    import dreval_assets.core.report_parser as parser_module

    def explode(body):
        raise RuntimeError("boom")

    monkeypatch.setattr(parser_module, "_scan_blocks", explode)
    report = parse_report(MARKDOWN_REPORT)
    assert titles(report)[0] == ("The State of Offshore Wind in 2024", 1)
    assert len(report.references) == 4 and report.has_reference_list
    assert report.claims == []
    assert any("parsing stopped early (RuntimeError: boom)" in w for w in report.warnings)


def test_html_comments_are_ignored():
    report = parse_report("<!-- draft note [9] -->\nSea level rose 10 cm since 1993 [1].\n<!--\n[2]\n-->\n")
    assert [c.indices for c in report.citations] == [[1]]


def test_sources_label_before_plain_bullets_is_not_a_reference_list():
    report = parse_report(
        "## Method\n\nSources:\n- Government statistics from 2023\n- Industry interviews\n\n"
        "Output fell 4% in 2023 [1].\n\n## References\n[1] Statistics office https://stats.example/output\n"
    )
    assert refs(report) == [(1, "https://stats.example/output", "Statistics office")]
    assert report.warnings == []
    assert "Government statistics from 2023" in report.sentences
