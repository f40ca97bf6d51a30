"""The parser on report shapes real releases publish (samples in tests/fixtures/report_shapes, written
for these tests in the layouts of ../shared/methods/formats.md): escaped and full-width markers,
superscripts, footnotes, reference lines with several indices, `Sources:` lines, agent chatter and
tool-call echoes in English and Chinese, IPv6-literal URLs."""
from __future__ import annotations

import asyncio
from pathlib import Path

import polars as pl
import pytest

from dreval_assets.core.chatter import chatter_lines, is_chatter_sentence
from dreval_assets.core.report_parser import is_checkable_fact, parse_report, without_citations
from dreval_assets.fetch.safety import UnsafeURLError, resolve_target
from dreval_assets.fetch.urls import url_key
from dreval_assets.stages.parse import parse_reports

SHAPES = Path(__file__).parent / "fixtures" / "report_shapes"


def parsed(name: str):
    return parse_report((SHAPES / name).read_text(encoding="utf-8"))


def claim_rows(report) -> list[tuple]:
    return [(c.kind, c.text, c.citation_indices, c.urls, c.unresolved_indices) for c in report.claims]


def resolved_share(report) -> tuple[int, int]:
    cited = {i for c in report.citations for i in c.indices}
    return len(cited - set(report.unresolved_indices)), len(cited)


# --------------------------------------------------------------------------- DRB, escaped by a converter

EIA = "https://www.eia.gov/todayinenergy/detail.php?id=61202"
WOODMAC = "https://www.woodmac.com/industry/power-and-renewables/us-energy-storage-monitor/"
BNEF = "https://about.bnef.com/blog/energy-storage-system-costs-2024/"


def test_escaped_markers_and_reference_lines_with_several_indices():
    report = parsed("drb_en_escaped.md")
    assert claim_rows(report) == [
        ("sentence", "The United States added 10.3 GW of utility-scale battery capacity in 2024, almost double the "
                     "2023 figure.", [1], [EIA], []),
        ("sentence", "California and Texas together accounted for about 70% of new installations.", [2, 4],
         [WOODMAC, EIA], []),
        ("sentence", "Arizona became the third-largest market after several projects near Phoenix came online.", [3],
         [WOODMAC], []),
        ("sentence", "Turnkey system prices fell by roughly 20% between 2023 and 2024.", [5, 6], [BNEF], []),
        ("sentence", "Lithium iron phosphate cells now dominate new projects.", [6], [BNEF], []),
        # a fact introduced by "Based on ..." is not chatter
        ("uncited", "Based on the 2024 EIA survey, average battery duration rose to 3.2 hours.", [], [], []),
        ("sentence", "Developers plan to add another 15 GW in 2025, although interconnection queues remain a "
                     "bottleneck.", [1, 7], [EIA, WOODMAC], []),
    ]
    assert sorted((r.index, r.url) for r in report.references) == [
        (1, EIA), (2, WOODMAC), (3, WOODMAC), (4, EIA), (5, BNEF), (6, BNEF), (7, WOODMAC)]
    assert {r.title for r in report.references} == {
        "EIA: U.S. battery storage capacity additions in 2024", "Wood Mackenzie US Energy Storage Monitor", ""}
    assert resolved_share(report) == (7, 7)
    assert report.warnings == [
        "agent chatter kept out of the claims: 5 sentence(s), 0 tool-call or reasoning block(s) "
        "(first: 'Okay, I will research the current state of grid-scale batte…')"]


# --------------------------------------------------------------------------- DRB, Chinese, full-width

def test_chinese_report_with_full_width_markers_and_chatter():
    report = parsed("drb_zh_fullwidth.md")
    caam = "https://www.caam.org.cn/chn/4/cate_30/con_5236712.html"
    customs = "https://www.customs.gov.cn/customs/302249/zfxxgk/2799825/302274/index.html"
    byd = "https://www.bydglobal.com/cn/news/2025-01-01.html"
    ec = "https://ec.europa.eu/commission/presscorner/detail/en/ip_24_3630"
    reuters = "https://www.reuters.com/business/autos-transportation/eu-tariffs-chinese-evs-2024-10-29/"
    assert claim_rows(report) == [
        ("sentence", "2024年中国新能源汽车出口量达到128.4万辆，同比增长6.7%。", [1], [caam], []),
        ("sentence", "其中纯电动汽车占比约为69%。", [2], [customs], []),
        ("sentence", "比亚迪全年海外销量超过41万辆。", [3, 4], [byd], []),  # 【3】【4】 on one reference line
        ("sentence", "欧盟自2024年10月起对中国电动车加征最高35.3%的反补贴税，对欧出口增速明显放缓。", [5, 6], [ec, reuters], []),
        ("sentence", "东南亚和拉丁美洲市场的份额在2024年持续上升。", [2], [customs], []),  # ^[2]
    ]
    assert resolved_share(report) == (6, 6)
    chatter = [s for s in report.sentences if is_chatter_sentence(s)]
    assert chatter == ["好的，我将针对中国新能源汽车出口情况进行深入研究。", "让我搜索一下最新的出口数据。",
                       "需要进一步了解2024年各季度的出口结构。", "我需要再查找一下拉美市场的具体数据。",
                       "以上是我的研究报告，希望对您有所帮助。"]
    assert report.warnings == [
        "agent chatter kept out of the claims: 5 sentence(s), 0 tool-call or reasoning block(s) "
        "(first: '好的，我将针对中国新能源汽车出口情况进行深入研究。')"]


# --------------------------------------------------------------------------- MiroEval, tool-call echoes

KFW = ("https://www.kfw.de/inlandsfoerderung/Privatpersonen/Bestehende-Immobilie/Förderprodukte/"
       "Heizungsförderung-für-Privatpersonen-Wohngebäude-(458)/")
BWP = "https://www.waermepumpe.de/presse/pressemitteilungen/details/absatz-2024/"
MIRROR = "http://[2001:db8:4::17]/dashboards/heat-pumps"


def test_tool_call_echoes_and_reasoning_are_never_claims():
    report = parsed("miroeval_tool_echo.md")
    assert claim_rows(report) == [
        ("sentence", "Since January 2024, the federal BEG programme covers a basic 30% of eligible costs for a heat "
                     "pump.", [1], [KFW], []),
        ("sentence", "An income bonus of 30% is available to households earning less than €40,000 a year.", [1, 2],
         [KFW], []),
        ("sentence", "The total subsidy is capped at 70%.", [2], [KFW], []),
        ("sentence", "Around 193,000 heat pumps were sold in Germany in 2024, a fall of 46% from 2023.", [3], [BWP], []),
        ("sentence", "The industry association expects a recovery in 2025.", [3, 4], [BWP, MIRROR], []),
    ]
    # the echoed URLs (bafa.de in a JSON call) are nobody's citation; the Sources line is a reference
    assert not any("bafa.de" in (c.url or "") for c in report.citations)
    assert [(r.index, r.url) for r in report.references][3:] == [
        (4, MIRROR), (5, "https://www.waermepumpe.de/presse/pressemitteilungen/"),
        (6, "https://www.bwp.de/en/heat-pump-sales-2024/")]
    assert [s.title for s in report.sections] == ["", "Heat Pump Subsidies in Germany", "The 2024 funding rules",
                                                  "Installations", "References"]
    assert report.warnings == [
        "agent chatter kept out of the claims: 2 sentence(s), 4 tool-call or reasoning block(s) "
        "(first: 'Now let me search for the current subsidy rates.')"]


def test_parsed_reports_row_counts_the_chatter():
    text = (SHAPES / "miroeval_tool_echo.md").read_text(encoding="utf-8")
    frames = parse_reports(pl.DataFrame([{"system": "s", "task": "t", "status": "ok", "detail": "", "text": text}]))
    row = frames["parsed_reports"].row(0, named=True)
    assert (row["n_claims"], row["n_cited_claims"], row["unresolved_indices"], row["citation_style"]) == (
        5, 5, [], "inline")
    assert any(w.startswith("agent chatter kept out of the claims: 2 sentence(s), 4 tool-call") for w in row["warnings"])
    assert frames["report_claims"].height == 5


# --------------------------------------------------------------------------- Wiki Live, footnotes

def test_footnotes_with_a_definition_list():
    report = parsed("wlc_footnotes.md")
    assert [(c.text, c.citation_indices, c.urls) for c in report.claims] == [
        ("The Kestrel Bay Lighthouse is a decommissioned lighthouse on the northern headland of Kestrel Bay.", [1],
         ["https://maritimeheritage.example.org/lights/kestrel-bay"]),
        ("It was built in 1871 and automated in 1964.", [2, 3],  # URL on the definition's continuation line
         ["https://archive.example.org/details/northernlights1872", "https://www.kestrelbay-history.example.net/lighthouse"]),
        ("Construction began in 1869 under the engineer Thomas Avery.", [3],  # ^[3]
         ["https://www.kestrelbay-history.example.net/lighthouse"]),
        ("The tower is 28 metres tall and was painted with red and white bands in 1902.", [4],
         ["https://coastalsurvey.example.gov/1902/kestrel"]),
        ("A local trust bought the lighthouse in 2019 for £1.2 million.", [5], []),  # its note has no URL
        ("The trust reopened the lamp room to visitors in 2022.", [6], []),  # no note at all
    ]
    # the `References: https://...` line is a reference numbered after every marker, so [^6] does not
    # resolve to it by accident
    assert (7, "https://kestrelbaytrust.example.org/annual-report-2022") in [(r.index, r.url) for r in report.references]
    assert report.unresolved_indices == [5, 6]
    assert not any("archive.example.org" in s for s in report.sentences)


# --------------------------------------------------------------------------- TVIR, superscripts

def test_superscript_markers_and_exponents():
    report = parsed("tvir_sup.md")
    assert [(c.kind, c.text, c.citation_indices) for c in report.claims] == [
        ("sentence", "Bike-sharing fleets in the 50 largest US cities grew to 310,000 bikes in 2024.", [1]),
        ("sentence", "E-bikes made up 42% of all trips.", [2, 3]),
        ("sentence", "Docking stations now cover 1,200 km2 of Chicago's area.", [4]),  # km<sup>2</sup> stays a unit
        ("figure_caption", "Figure 1: Monthly bike-share trips in New York, 2023–2024", [3]),
        ("sentence", "Ridership in Chicago rose 18% year on year.", [4]),
    ]
    assert resolved_share(report) == (4, 4) and report.warnings == []


# --------------------------------------------------------------------------- `Sources:` lines

def test_sources_lines_are_references_never_claims():
    report = parsed("generic_sources_lines.md")
    assert claim_rows(report) == [
        ("uncited", "Norway operates more than 80 battery-electric car ferries, the largest such fleet in the world.",
         [], [], []),
        ("uncited", "The first, MF Ampere, entered service in 2015 between Lavik and Oppedal.", [], [], []),
        ("uncited", "Operators report energy savings of about 60% compared with diesel ferries in 2023.", [], [], []),
    ]
    assert [(r.index, r.url, r.title) for r in report.references] == [
        (1, "https://www.nho.no/en/ferries-2024", ""),
        (2, "https://www.dnv.com/maritime/electric-ferries-2024", ""),
        (3, "https://www.siemens-energy.com/global/en/ampere-case.html", "Siemens Energy case study"),
        (4, "https://www.sintef.no/en/ferry-energy-study-2023/", ""),
    ]
    assert not any(s.startswith(("Source", "References")) for s in report.sentences)
    assert "sintef" not in without_citations((SHAPES / "generic_sources_lines.md").read_text())


@pytest.mark.parametrize(("line", "indices"), [
    ("Sources: https://a.example/one, https://b.example/two", [3, 4]),
    ("**Source:** [Annual report](https://a.example/one); [Press release](https://b.example/two)", [3, 4]),
    ("- References: [1] https://a.example/one [2] https://b.example/two", [1, 2]),
    ("来源：https://a.example/one、https://b.example/two", [3, 4]),
    ("数据来源: [国家统计局](https://a.example/one) https://b.example/two", [3, 4]),
])
def test_label_line_shapes(line, indices):
    report = parse_report(f"Exports rose 5% in 2024 [1] and imports fell [2].\n{line}\n")
    assert [(r.index, r.url) for r in report.references] == list(zip(indices, ["https://a.example/one",
                                                                               "https://b.example/two"]))
    assert [c.text for c in report.claims] == ["Exports rose 5% in 2024 and imports fell."]


def test_numbered_sources_line_resolves_markers_and_unnumbered_one_does_not():
    numbered = parse_report("Exports rose 5% in 2024 [1].\nSources: [1] https://a.example/one\n")
    assert numbered.claims[0].urls == ["https://a.example/one"] and numbered.unresolved_indices == []
    unnumbered = parse_report("Exports rose 5% in 2024 [1].\nSources: https://a.example/one\n")
    assert unnumbered.claims[0].unresolved_indices == [1]  # [1] is not "the first URL on the line"
    assert [(r.index, r.url) for r in unnumbered.references] == [(2, "https://a.example/one")]


def test_a_sources_line_without_links_is_dropped_from_claims_and_adds_no_reference():
    report = parse_report("Exports rose 5% in 2024 according to customs data.\n"
                          "Source: Norwegian Public Roads Administration, annual statistics 2023.\n")
    assert [c.text for c in report.claims] == ["Exports rose 5% in 2024 according to customs data."]
    assert report.references == [] and not report.has_reference_list


def test_sources_of_something_is_prose():
    report = parse_report("Sources of revenue: tolls brought in 40% of income in 2023 [1].\n\n[1] https://a.example/t\n")
    assert [c.text for c in report.claims] == ["Sources of revenue: tolls brought in 40% of income in 2023."]


# --------------------------------------------------------------------------- headingless reference lists

def test_a_headingless_list_ending_the_report_resolves_markers():
    report = parse_report("Ground-source units cost more to install in 2024 [1].\n\n"
                          "[1] Heat pump field trial <https://example.org/trial>\n"
                          "[2] [3] Installer survey https://example.org/survey\n")
    assert claim_rows(report) == [("sentence", "Ground-source units cost more to install in 2024.", [1],
                                   ["https://example.org/trial"], [])]
    assert [(r.index, r.url) for r in report.references] == [
        (1, "https://example.org/trial"), (2, "https://example.org/survey"), (3, "https://example.org/survey")]


def test_a_bracketed_line_inside_a_section_stays_prose():
    report = parse_report("## Costs\n\n[1] Costs fell 5% in 2024, see https://a.example/x\n\nPrices rose 3% in 2023 [1].\n")
    assert report.references == []
    assert len(report.claims) == 2


# --------------------------------------------------------------------------- chatter rules

@pytest.mark.parametrize("sentence", [
    "Now let me search for the latest deployment figures.",
    "Okay, I will research heat pump adoption in Europe.",
    "Based on my research, I'll provide a comprehensive analysis of grid storage.",
    "Based on the information I've gathered, here is a detailed report.",
    "Let me check the installation numbers before continuing.",
    "Now I have enough information to write the report.",
    "Next, I'll compile the findings into a report.",
    "Here is the final report on heat pumps:",
    "I couldn't find official figures for 2025.",
    "I hope this report helps.",
    "Let me know if you would like me to look into any specific state.",
    "Searching for BEG subsidy rates 2024.",
    "让我搜索一下最新的出口数据。",
    "需要进一步了解2024年各季度的出口结构。",
    "好的，我将针对中国新能源汽车出口情况进行深入研究。",
    "根据我的研究，我将为您提供一份完整的报告。",
    "我已经收集了足够的信息。",
    "以上是我的研究报告，希望对您有所帮助。",
])
def test_chatter_sentences(sentence):
    assert is_chatter_sentence(sentence)
    assert not is_checkable_fact(sentence)


@pytest.mark.parametrize("sentence", [
    "Based on the 2023 census, the population rose 4%.",
    "Based on my research, the market grew 5% in 2024.",
    "From the analysis, I conclude that costs fell 5%.",
    "We need to invest more in storage.",
    "Research shows that 40% of users check prices daily.",
    "The search for new reserves continued in 2023.",
    "Looking at the data, exports rose 5% in 2024.",
    "Here is a breakdown of 2024 sales by region.",
    "Checking accounts fell 3% in 2024.",
    "需要进一步完善相关法规。",
    "我们需要加强监管。",
    "根据搜索结果，2024年出口增长了6.7%。",
])
def test_report_sentences_are_not_chatter(sentence):
    assert not is_chatter_sentence(sentence)


def test_a_cited_chatter_sentence_is_not_a_claim_and_its_link_is_no_citation():
    report = parse_report("Let me open https://a.example/page to verify the 2024 figure.\n\n"
                          "Revenue rose 5% in 2024 [1].\n\n## References\n[1] https://b.example/r\n")
    assert [(c.text, c.urls) for c in report.claims] == [("Revenue rose 5% in 2024.", ["https://b.example/r"])]
    assert [c.url for c in report.citations] == [None]


def test_tool_call_shapes():
    lines = [
        "<tool_call>",                                                          # 0 block of three lines
        '{"name": "web_search", "arguments": {"query": "x"}}',
        "</tool_call>",
        '{"name": "fetch_url", "arguments": {',                                 # 3 JSON over two lines
        '  "url": "https://a.example/{not a brace}"}}',
        "Calling tool: search(query=\"heat pumps\")",                           # 5
        "[web_search] heat pump sales 2024",                                    # 6
        "Action: web_search[heat pumps]",                                       # 7
        "Action: reduce emissions by 2030.",                                    # 8 prose, kept
        "```json",                                                              # 9 code: never counted
        '{"name": "web_search", "arguments": {}}',
        "```",
        "<think>I should check BWP.</think>",                                   # 12
    ]
    code = [9 <= i <= 11 for i in range(len(lines))]
    found, blocks = chatter_lines(lines, code)
    assert sorted(found) == [0, 1, 2, 3, 4, 5, 6, 7, 12] and blocks == 6


def test_output_that_starts_inside_the_reasoning():
    report = parse_report("The user asks about ferries. I should search Statistics Norway for 2023.\n</think>\n\n"
                          "# Ferries\n\nNorway had 80 electric ferries in 2023 [1].\n\n[1] https://ssb.example/ferries\n")
    assert [c.text for c in report.claims] == ["Norway had 80 electric ferries in 2023."]
    assert "1 tool-call or reasoning block(s)" in report.warnings[0]


# --------------------------------------------------------------------------- IPv6 literals

def test_ipv6_literal_urls_through_parser_normalisation_and_safety():
    report = parse_report("The mirror lists 193,000 units sold in 2024 [1].\n\n## References\n"
                          "[1] Dashboard mirror http://[2001:DB8:4::17]:8080/dashboards/heat-pumps\n")
    assert report.claims[0].urls == ["http://[2001:DB8:4::17]:8080/dashboards/heat-pumps"]
    assert url_key(report.claims[0].urls[0]) == "https://[2001:db8:4::17]:8080/dashboards/heat-pumps"
    assert url_key("https://[2001:db8::1]/x/") == "https://[2001:db8::1]/x"

    async def resolver(host, port):
        return [host]

    with pytest.raises(UnsafeURLError, match="2001:db8:4::17 is a private address"):  # documentation range
        asyncio.run(resolve_target(report.claims[0].urls[0], resolver=resolver))
    target = asyncio.run(resolve_target("https://[2606:4700::1111]:8443/x", resolver=resolver))
    assert (target.host, target.port, target.host_header) == ("2606:4700::1111", 8443, "[2606:4700::1111]:8443")
    assert target.pinned_url == "https://[2606:4700::1111]:8443/x"


def test_chinese_response_with_tool_lines_and_a_headingless_list():
    report = parsed("miroeval_zh_trailing_list.md")
    mot = "https://www.mot.gov.cn/fenxigongbao/hangyegongbao/202506/t20250610_4170228.html"
    nbport, shanghai = "https://www.nbport.com.cn/gfww/tzzgx/dqbg/", "https://www.portshanghai.com.cn/xwzx/"
    assert [(c.text, c.citation_indices, c.urls) for c in report.claims] == [
        ("2024年全国港口完成货物吞吐量176亿吨，同比增长3.7%。", [1], [mot]),
        ("宁波舟山港货物吞吐量达到13.77亿吨，连续16年位居全球第一。", [2, 3], [nbport]),
        ("上海港集装箱吞吐量突破5000万标准箱。", [4], [shanghai]),
        ("在集装箱航线方面，东南亚航线的运量增长最快，2024年同比增长约12%。", [3], [nbport]),
    ]
    assert not any("mot.gov.cn/tongjishuju" in (c.url or "") for c in report.citations)  # the [scrape] echo
    assert report.unresolved_indices == [] and len(report.references) == 4
    assert report.warnings == [
        "agent chatter kept out of the claims: 3 sentence(s), 3 tool-call or reasoning block(s) "
        "(first: '我需要先了解2024年中国港口的吞吐量排名。')"]
