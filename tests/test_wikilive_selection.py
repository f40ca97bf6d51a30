"""The Wiki Live selection's measures and rules as pure functions: reference URLs, structure,
list-likeness, topics and the round-robin over topics."""
from dreval_assets.benchmarks.wlc.live.wikilive_selection import Candidate, select
from dreval_assets.benchmarks.wlc.live.wikilive_topics import topic_of
from dreval_assets.benchmarks.wlc.live.wikilive_wikitext import is_list_like, reference_urls, structure

WIKITEXT = """{{Infobox bridge | name = Ford Bridge | website = https://fordbridge.example.org}}
'''Ford Bridge''' is a bridge.<ref>{{cite web |url=https://a.example.org/1
 |archive-url=https://web.archive.org/x/https://a.example.org/1 |title=A}}</ref>
It opened in 1901.<ref name="b">[https://b.example.org/page B report]</ref>
It cost £4,000.<ref name="b"/>{{sfn|Smith|1990|p=4}}

== History ==
Built in 1899.<ref>Smith 1990, https://a.example.org/1.</ref>
=== Construction ===
Text.
=== Opening ===
Text.
== Design ==
Text.
== See also ==
* [[Other bridge]]
=== Nearby ===
* [[Mill]]
== References ==
{{Reflist}}
== Sources ==
* {{cite book |last=Smith |year=1990 |title=Bridges |url=https://books.example.org/smith}}
== External links ==
* [https://fordbridge.example.org Official site]
"""


def test_reference_urls_count_distinct_sources_in_refs_and_citation_templates():
    # a.example.org/1 (twice, once with an archive copy), b.example.org (reused by name), the sfn source's book
    assert reference_urls(WIKITEXT) == 3


def test_structure_leaves_navigation_sections_and_their_subsections_out():
    assert structure(WIKITEXT) == (2, 2)


def test_list_like_by_title_or_by_body():
    assert is_list_like("List of bridges in Westmarch", "Prose " * 100)
    assert is_list_like("Lists of mills", "")
    assert not is_list_like("Ford Bridge", WIKITEXT)  # the See also and External links lists do not count
    table = "Intro.\n{| class=wikitable\n" + "\n".join(f"|-\n| {i} || winner {i} of the county cup" for i in range(20))
    assert is_list_like("County cup finals", table + "\n|}")
    bullets = "Intro line.\n" + "\n".join(f"* Item number {i} in the list of things" for i in range(10))
    assert is_list_like("Things", bullets) and not is_list_like("Things", "A long prose paragraph. " * 30 + bullets)


def test_topics_from_categories():
    assert topic_of(["Category:1961 births", "Category:Estonian lichenologists", "Category:Living people"]) == (
        "Natural sciences", "Estonian lichenologists")
    assert topic_of(["Category:1961 births", "Category:Living people"]) == ("other", None)
    assert topic_of(["Battles of the Hundred Years' War", "Conflicts in 1346"])[0] == "Warfare"
    assert topic_of(["2019 video games", "Action games"])[0] == "Video games"
    # most votes win: one geography category against two history ones
    assert topic_of(["Villages in Westmarch", "Medieval history of Westmarch", "Ancient sites"]) == (
        "History", "Medieval history of Westmarch")


def candidate(pageid, topic, refs, sections=3, subsections=0):
    return Candidate(pageid, f"Article {pageid}", None, in_window=True, list_like=False, reference_urls=refs,
                     sections=sections, subsections=subsections, topic=topic, bytes=1000)


def test_round_robin_over_topics_by_rank():
    pool = [candidate(1, "History", 90), candidate(2, "History", 80), candidate(3, "History", 70),
            candidate(4, "Music", 20), candidate(5, "Warfare", 10), candidate(6, "History", 60)]
    kept = select(pool, 4)
    assert [c.pageid for c in kept] == [1, 2, 4, 5]  # round 1: History, Music, Warfare; round 2: History
    assert [c.rank for c in pool] == [1, 2, 3, 5, 6, 4]
    assert pool[2].reason == "not in the top 4 across topics: rank 3 of 6, topic History has 2 kept"
    assert pool[0].reason.startswith("kept: rank 1 of 6 (90 reference URLs")


def test_structural_depth_breaks_ties_in_reference_urls():
    shallow, deep = candidate(1, "Music", 10, sections=2), candidate(2, "Music", 10, sections=5, subsections=3)
    assert [c.pageid for c in select([shallow, deep], 1)] == [2]
    assert shallow.outcome == "dropped" and shallow.rank == 2


def test_fewer_candidates_than_the_limit_keeps_them_all():
    pool = [candidate(1, "Music", 3), candidate(2, "Music", 2)]
    assert len(select(pool, 50)) == 2 and all(c.kept for c in pool)
