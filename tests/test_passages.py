"""Passage selection under a token budget: splitting, BM25 ranking, budget rules, odd pages."""
from __future__ import annotations

import re

import pytest

from dreval_assets.core.passages import (
    SKIP_MARK,
    Selection,
    estimate_tokens,
    select_passages,
    split_passages,
)

# A market report mixing several topics; the charging paragraph without numbers is the most
# "on topic" one for a claim about charging points, the one with the figure is shorter on words.
ENERGY_PAGE = """Global Energy Transition Review 2024

Electric car sales neared 14 million in 2023, 95% of which were in China, Europe and the United
States. Almost 250,000 cars were registered every week, more than the annual total in 2013.

Public charging in Europe: charging points, charging networks and charging operators grew across
Europe. Public charging points in Europe are run by many charging operators, and public charging
networks in Europe keep adding charging points along motorways, in cities and at supermarkets, so
drivers in Europe find public charging points more easily than before.

Wind power had another record year. Offshore wind auctions in the North Sea awarded 9.6 GW of new
capacity, while onshore wind permitting in Germany accelerated after new planning rules took effect.
Turbine makers nevertheless reported losses because of higher steel and financing costs.

According to the European Alternative Fuels Observatory, Europe had 41,200 public fast charging
points at the end of 2023, most of them along the core TEN-T motorway network.

Wheat markets calmed after the 2022 price spike. Export prices from the Black Sea fell by 27% over
the year, and the harvest in Argentina recovered to 15.9 million tonnes after a drought in 2022.

Semiconductor export controls were tightened in October 2023. The new rules cover advanced
lithography tools and restrict sales of chips for data centres to several destinations.
"""

CHARGING_NUMBERLESS = 1  # index of the "Public charging in Europe" passage at target_words=60
CHARGING_FIGURE = 3  # index of the "41,200" passage


def _passages(page: str, target: int = 60) -> list[str]:
    return split_passages(page, target)


def _section(topic: str, number: int) -> str:
    """A long, realistic-looking paragraph on a topic, repeated with varying figures."""
    texts = {
        "grid": (
            f"Grid operators in region {number} reported that transmission upgrades were delayed "
            "by permitting. New interconnectors were planned, substations were expanded and "
            "operators asked regulators for faster approval of overhead lines. Congestion costs "
            "rose again as more solar and wind capacity waited for a connection."
        ),
        "bank": (
            f"In its meeting number {number} the central bank kept its policy rate unchanged and "
            "said inflation was easing more slowly than expected. Bond markets reacted calmly, "
            "mortgage rates stayed high and the bank repeated that further decisions would depend "
            "on incoming data about wages and services prices."
        ),
        "health": (
            f"Hospital district {number} reported longer waiting lists for elective surgery. "
            "Staff shortages in nursing and anaesthesia were the main reason given, and the "
            "district announced a recruitment campaign together with overtime incentives for "
            "surgeons working on weekends."
        ),
    }
    return texts[topic]


def _long_page() -> str:
    parts = ["Quarterly Infrastructure and Economy Digest"]
    topics = ["grid", "bank", "health"]
    for i in range(60):
        parts.append(_section(topics[i % 3], 100 + i))
        if i == 7:
            parts.append(
                "The battery factory in Salzgitter started series production of 20 GWh of cells "
                "in March, employing 2,300 workers at full capacity."
            )
        if i == 52:
            parts.append(
                "The Brenner Base Tunnel, 64 kilometres long, is now expected to open in 2032 "
                "after geological problems on the Austrian side."
            )
    return "\n\n".join(parts)


# --- estimate_tokens --------------------------------------------------------------------------


def test_estimate_tokens_rule():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcdefgh") == 2  # 8 chars / 4
    assert estimate_tokens("abcdefghi") == 3  # rounded up
    assert estimate_tokens("a b c d e") == 5  # 9 chars would give 3, but there are 5 words
    assert estimate_tokens("电动汽车销量") == 6  # every CJK character counts as a word


# --- split_passages -----------------------------------------------------------------------------


def test_split_is_verbatim_and_in_page_order():
    page = _long_page()
    passages = split_passages(page, 80)
    assert len(passages) > 10
    position = 0
    for passage in passages:
        found = page.find(passage, position)
        assert found >= position, passage[:60]
        assert passage == passage.strip()
        position = found + len(passage)
    # nothing but white space is lost
    assert "".join("".join(passages).split()) == "".join(page.split())


def test_long_paragraph_is_cut_at_sentence_ends():
    sentences = [
        f"Sentence {i} of the annual report explains the outlook for the region carefully."
        for i in range(40)
    ]
    page = " ".join(sentences)
    passages = split_passages(page, 50)
    assert len(passages) >= 6
    for passage in passages:
        assert len(passage.split()) <= 50
        assert passage.endswith("carefully.")
        assert passage.startswith("Sentence ")


def test_tiny_paragraphs_are_merged_and_big_ones_kept_apart():
    page = "Results\n\nTable 3 shows the totals.\n\nSee below.\n\n" + _section("bank", 1)
    passages = split_passages(page, 60)
    # heading and two one-line paragraphs merge with the following paragraph (under 60 words)
    assert len(passages) == 1
    assert passages[0] == page.strip()
    passages = split_passages(page, 20)
    assert passages[0] == "Results\n\nTable 3 shows the totals.\n\nSee below."
    assert len(passages) > 2


def test_hard_wrapped_text_without_blank_lines():
    prose = " ".join(
        _section(t, 500 + i) for i, t in enumerate(["grid", "bank", "health"] * 4)
    ) + " The Brenner Base Tunnel is expected to open in 2032."
    lines, line = [], ""
    for word in prose.split():  # hard wrap at 78 characters, like PDF text
        if len(line) + len(word) + 1 > 78:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    page = "\n".join(lines)
    assert "\n\n" not in page

    passages = split_passages(page, 60)
    assert len(passages) >= 8
    assert all(len(p.split()) <= 60 for p in passages)
    assert all(p in page for p in passages)
    assert "".join("".join(passages).split()) == "".join(page.split())

    selection = select_passages(page, ["The Brenner Base Tunnel will open in 2032."], 100, 60)
    assert selection.truncated
    assert "2032" in selection.text
    assert len(selection.passages) == 1


def test_cjk_text_without_spaces():
    paragraph_a = "".join(
        f"第{i}季度，风电装机容量继续增长，海上风电项目陆续并网。" for i in range(1, 9)
    )
    paragraph_b = "2023年中国电动汽车销量达到810万辆，同比增长35%。充电桩数量也大幅增加。"
    paragraph_c = "".join(
        f"第{i}批小麦出口价格下降，农民收入受到影响，政府提供补贴。" for i in range(1, 9)
    )
    page = paragraph_a + paragraph_c + paragraph_b + paragraph_c
    assert " " not in page and "\n" not in page

    passages = split_passages(page, 50)
    assert len(passages) >= 6
    assert all(estimate_tokens(p) <= 50 for p in passages)  # characters count as words
    assert "".join(passages) == page

    selection = select_passages(page, ["中国电动汽车销量为810万辆"], 60, 50)
    assert selection.truncated
    assert "810万辆" in selection.text
    assert estimate_tokens(selection.text) <= 60


def test_split_empty_and_blank_pages():
    assert split_passages("") == []
    assert split_passages(" \n\n \t\n") == []


# --- select_passages ---------------------------------------------------------------------------


def test_passage_with_the_number_beats_topical_numberless_one():
    passages = _passages(ENERGY_PAGE)
    assert passages[CHARGING_NUMBERLESS].startswith("Public charging in Europe")
    assert "41,200" in passages[CHARGING_FIGURE]
    claim = "Europe had 41200 public charging points at the end of 2023."
    figure, numberless = (estimate_tokens(passages[i]) for i in (CHARGING_FIGURE, CHARGING_NUMBERLESS))
    budget = max(figure, numberless) + 5  # either passage fits, not both
    assert figure + numberless > budget

    selection = select_passages(ENERGY_PAGE, [claim], budget, 60)
    assert CHARGING_FIGURE in selection.passages
    assert CHARGING_NUMBERLESS not in selection.passages
    assert passages[CHARGING_FIGURE] in selection.text
    assert "Public charging in Europe" not in selection.text


def test_percent_and_thousands_separators_match():
    passages = _passages(ENERGY_PAGE)
    wheat = next(i for i, p in enumerate(passages) if p.startswith("Wheat"))
    budget = estimate_tokens(passages[wheat]) + 5
    selection = select_passages(ENERGY_PAGE, ["Prices fell 27 percent."], budget, 60)
    assert selection.passages == (wheat,)
    selection = select_passages(ENERGY_PAGE, ["About 250000 were registered."], 60, 60)
    assert selection.passages == (0,)
    assert "250,000" in selection.text


def test_number_formats_decide_between_otherwise_equal_passages():
    page = "\n\n".join([
        "Europe had 38,900 public fast charging points at the end of 2022, the observatory said.",
        "Europe had 41,200 public fast charging points at the end of 2023, the observatory said.",
        "Europe had 44,700 public fast charging points by June 2024, the observatory said.",
        "Fast charging prices in Europe rose 12.50% on average, the observatory said.",
    ])
    budget = 30  # one passage
    for claim, expected in [
        ("Europe had 41200 public fast charging points.", 1),
        ("Europe had $41,200.00 public fast charging points.", 1),
        ("Europe had 44700 fast charging points.", 2),
        ("Fast charging prices rose 12.5 percent.", 3),
    ]:
        selection = select_passages(page, [claim], budget, 20)
        assert selection.passages == (expected,), claim


def test_plural_and_case_are_folded():
    page = "\n\n".join([
        "Lithium mines opened in Chile and Argentina during the year.",
        "Lithium Batteries are now recycled at a large plant in Nevada.",
        "Lithium prices fell sharply in the second half.",
    ])
    selection = select_passages(page, ["Recycling of a lithium battery"], 18, 15)
    assert selection.passages == (1,)
    selection = select_passages(page, ["A new LITHIUM MINE"], 18, 15)
    assert selection.passages == (0,)


def test_rare_claim_words_outweigh_common_ones():
    page = "\n\n".join([
        "Copper market: the copper market tightened, market analysts said, as copper market demand"
        " beat copper market supply.",
        "Copper market prices rose in Nevada after a smelter closed for repairs.",
        "The copper market outlook for next year depends on the market in China.",
        "Copper market volumes were flat, according to market data from the exchange.",
    ])
    assert len(split_passages(page, 17)) == 4
    selection = select_passages(page, ["The copper market in Nevada"], 25, 17)
    assert selection.passages == (1,)


def test_two_claims_about_distant_parts_both_get_their_passage():
    page = _long_page()
    passages = split_passages(page, 80)
    factory = next(i for i, p in enumerate(passages) if "Salzgitter" in p)
    tunnel = next(i for i, p in enumerate(passages) if "Brenner" in p)
    assert tunnel - factory > 20
    claims = [
        "The Salzgitter battery factory produces 20 GWh of cells with 2,300 workers.",
        "The Brenner Base Tunnel will open in 2032.",
    ]
    budget = estimate_tokens(passages[factory]) + estimate_tokens(passages[tunnel]) + 10
    selection = select_passages(page, claims, budget, 80)
    assert selection.passages == (factory, tunnel)
    assert selection.text == passages[factory] + SKIP_MARK + passages[tunnel]


def test_every_claim_gets_its_best_passage_before_any_gets_a_second():
    page = _long_page()
    passages = split_passages(page, 80)
    tunnel = next(i for i, p in enumerate(passages) if "Brenner" in p)
    # the first claim matches 20 bank passages; the second only the tunnel one
    claims = ["The central bank kept its policy rate unchanged as inflation eased slowly.",
              "The Brenner Base Tunnel will open in 2032."]
    budget = 3 * max(estimate_tokens(p) for p in passages)
    selection = select_passages(page, claims, budget, 80)
    assert tunnel in selection.passages
    assert 2 <= len(selection.passages) <= 3
    others = [i for i in selection.passages if i != tunnel]
    assert all("central bank" in passages[i] for i in others)


def test_a_passage_that_does_not_fit_is_skipped_for_a_smaller_one():
    factory = "The Salzgitter cell factory employs 2,300 workers."
    tunnel_long = (
        "The Brenner Base Tunnel will open in 2032. " + _section("grid", 7) + " " + _section("bank", 8)
    )
    tunnel_short = "Tunnel works are planned for 2032."
    page = "\n\n".join([factory, tunnel_long, tunnel_short])
    target = len(tunnel_long.split())
    assert split_passages(page, target) == [factory, tunnel_long, tunnel_short]
    budget = estimate_tokens(factory) + estimate_tokens(tunnel_short) + 10
    assert budget < estimate_tokens(factory) + estimate_tokens(tunnel_long)
    claims = ["Salzgitter employs 2,300 workers.", "The Brenner Base Tunnel opens in 2032."]
    selection = select_passages(page, claims, budget, target)
    assert selection.passages == (0, 2)
    assert selection.text == factory + SKIP_MARK + tunnel_short


def test_whole_page_fast_path_returns_the_page_unchanged():
    page = "\n  " + ENERGY_PAGE + "\n\n\n"
    budget = estimate_tokens(page)
    selection = select_passages(page, ["anything at all"], budget, 60)
    assert selection == Selection(
        page, False, len(page), len(page), tuple(range(len(_passages(page))))
    )
    # one token less and it no longer fits
    assert select_passages(page, ["anything at all"], budget - 1, 60).text != page


def test_truncation_flag_and_char_counts():
    page = _long_page()
    budget = 400
    selection = select_passages(page, ["Salzgitter battery cells 2,300 workers"], budget, 80)
    assert selection.truncated
    assert selection.total_chars == len(page)
    separators = selection.text.count(SKIP_MARK)
    assert selection.kept_chars == len(selection.text) - separators * len(SKIP_MARK)
    assert 0 < selection.kept_chars < selection.total_chars
    assert estimate_tokens(selection.text) <= budget
    assert "Salzgitter" in selection.text
    # the budget is used: no further passage would have fitted
    passages = split_passages(page, 80)
    smallest_left = min(
        estimate_tokens(p) for i, p in enumerate(passages) if i not in selection.passages
    )
    assert estimate_tokens(selection.text) + smallest_left + 2 > budget


def test_at_least_one_passage_cut_at_the_budget():
    passages = _passages(ENERGY_PAGE)
    selection = select_passages(ENERGY_PAGE, ["41,200 public fast charging points"], 12, 60)
    assert selection.passages == (CHARGING_FIGURE,)
    assert selection.truncated
    assert 0 < estimate_tokens(selection.text) <= 12
    assert passages[CHARGING_FIGURE].startswith(selection.text)
    assert selection.kept_chars == len(selection.text)
    assert not selection.text.endswith(" ")
    # the cut falls between words
    rest = passages[CHARGING_FIGURE][len(selection.text):]
    assert rest[:1].isspace()


def test_zero_or_negative_budget_does_not_raise():
    for budget in (0, -5):
        selection = select_passages(ENERGY_PAGE, ["wind"], budget, 60)
        assert selection.text == ""
        assert selection.truncated
        assert len(selection.passages) == 1


def test_output_is_in_page_order_with_markers_only_at_gaps():
    page = _long_page()
    passages = split_passages(page, 80)
    claims = [
        "The Brenner Base Tunnel will open in 2032.",  # late in the page, asked first
        "The Salzgitter battery factory employs 2,300 workers.",
        "Hospital district 101 reported longer waiting lists.",
    ]
    selection = select_passages(page, claims, 1200, 80)
    assert list(selection.passages) == sorted(selection.passages)
    positions = [selection.text.find(passages[i]) for i in selection.passages]
    assert -1 not in positions and positions == sorted(positions)
    gaps = sum(1 for a, b in zip(selection.passages, selection.passages[1:]) if b != a + 1)
    assert selection.text.count(SKIP_MARK) == gaps
    for a, b in zip(selection.passages, selection.passages[1:]):
        if b == a + 1:  # adjacent passages keep the page's own white space between them
            assert passages[a] + "\n\n" + passages[b] in selection.text


def test_ties_are_broken_by_page_order():
    block = "The depot stores 7,777 spare rails for the northern line."
    page = "\n\n".join([_section("grid", 1), block, _section("bank", 2), block, _section("health", 3)])
    passages = split_passages(page, 30)
    budget = estimate_tokens(block) + 3
    selection = select_passages(page, ["7,777 spare rails"], budget, 30)
    assert selection.text == block
    assert selection.passages == (passages.index(block),)


def test_empty_page():
    selection = select_passages("", ["Electric car sales neared 14 million."], 100)
    assert selection == Selection("", False, 0, 0, ())
    assert select_passages("", [], 0) == Selection("", False, 0, 0, ())


def test_blank_page_over_budget():
    page = " " * 400 + "\n\n" * 50
    selection = select_passages(page, ["x"], 10)
    assert selection.text == ""
    assert selection.passages == ()
    assert selection.total_chars == len(page)


@pytest.mark.parametrize("queries", [[], [""], ["the of and"], ["zzzz qqqq"]])
def test_no_usable_query_reads_the_page_from_the_top(queries):
    page = _long_page()
    passages = split_passages(page, 80)
    selection = select_passages(page, queries, 300, 80)
    assert selection.truncated
    assert selection.passages[0] == 0
    assert list(selection.passages) == list(range(len(selection.passages)))
    assert selection.text.startswith("Quarterly Infrastructure and Economy Digest")
    assert estimate_tokens(selection.text) <= 300
    assert selection.text == "\n\n".join(passages[: len(selection.passages)])


def test_deterministic_and_independent_of_claim_order():
    page = _long_page()
    claims = [
        "The Brenner Base Tunnel will open in 2032.",
        "The central bank kept its policy rate unchanged in meeting 131.",
        "Grid operators in region 139 reported delayed transmission upgrades.",
    ]
    first = select_passages(page, claims, 700, 80)
    assert select_passages(page, claims, 700, 80) == first
    assert select_passages(page, list(reversed(claims)), 700, 80) == first
    assert re.search(r"\b131\b", first.text) and re.search(r"\b139\b", first.text)
    assert "Brenner" in first.text


def test_target_words_must_be_positive():
    with pytest.raises(ValueError):
        split_passages("Some text.", 0)


def test_texts_asked_about_again_are_read_once_and_rank_alike():
    """A report's statements ranked for each of its gold facts (Wiki Live), a page's passages for each
    batch of claims cited to it: read once per run, the same order as read afresh."""
    from dreval_assets.core import passages
    from dreval_assets.core.run_caches import clear_run_caches

    statements = ["The Lowmarsh ferry carried 41,200 passengers in 2023.", "Estuary Links added a vessel.",
                  "低沼渡轮在2023年运送了41,200名乘客。", "Crossing time fell to 14 minutes."]
    facts = ["41,200 passengers in 2023", "a third vessel named Curlew", "渡轮 乘客"]
    clear_run_caches()
    ranked = [passages._priority(statements, [fact]) for fact in facts]
    assert passages._counted.cache_info().misses == 1 and passages._counted.cache_info().hits == 2
    clear_run_caches()
    assert [passages._priority(list(statements), [fact]) for fact in facts] == ranked
    assert ranked[0][0][0] == 0 and ranked[2][0][0] == 2  # the stated figure, the Chinese sentence first
