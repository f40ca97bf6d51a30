"""The topic of a Good Article, for the Wiki Live selection's spread across categories.

Wikipedia files each Good Article under one of 15 topics (WP:GA) when it is reviewed; that choice is
written in the talk page's GA template, which we do not read (one more call per article, and talk
pages are large). Our rule instead, from the page's visible categories (`prop=categories`,
`clshow=!hidden`): each category votes for the first topic below with a keyword that starts one of
its words (case-insensitive); the topic with the most votes wins, a tie going to the topic of the
earliest voting category; no vote means `other`. The category that decided (the first one voting for
the winner) is kept beside it. The keyword lists are ours and approximate.
"""
from __future__ import annotations

import re
from typing import Sequence

OTHER = "other"

TOPIC_KEYWORDS: dict[str, tuple[str, ...]] = {
    "Video games": ("video game",),
    "Warfare": ("war", "wars", "military", "battle", "army", "armies", "navy", "naval", "regiment", "soldier",
                "warship", "weapon", "air force", "conflicts", "sieges"),
    "Sports and recreation": ("sport", "football", "cricket", "basketball", "baseball", "olympic", "athlet",
                              "tennis", "golf", "rugby", "boxing", "boxer", "wrestl", "racing", "cyclist",
                              "swimmer", "league", "club", "hockey", "marathon", "chess"),
    "Music": ("music", "song", "album", "singer", "band", "composer", "opera", "orchestra", "rapper",
              "singles"),
    "Media and drama": ("film", "television", "tv ", "actor", "actress", "radio", "theatre", "theater",
                        "drama", "episode", "animated", "sitcom", "podcast"),
    "Language and literature": ("novel", "poem", "poet", "writer", "author", "literature", "book", "language",
                                "linguist", "comics", "journalist", "short stor", "magazine"),
    "Mathematics": ("mathemati", "theorem", "algebra", "geometry", "number theory", "statistic"),
    "Natural sciences": ("species", "biolog", "chemi", "physic", "astronom", "geolog", "mineral", "plant",
                         "animal", "bird", "fish", "mammal", "insect", "fungi", "lichen", "botan", "zoolog",
                         "taxa", "dinosaur", "fossil", "hurricane", "storm", "cyclone", "earthquake", "volcano",
                         "medicine", "disease", "medical", "scientist", "genus", "star", "planet", "galax"),
    "Philosophy and religion": ("philosoph", "religio", "christian", "islam", "muslim", "jewish", "judaism",
                                "buddhis", "hindu", "theolog", "saint", "bishop", "mytholog", "deities",
                                "clergy", "pope", "monaster"),
    "Agriculture, food and drink": ("agricultur", "farm", "food", "drink", "cuisine", "dish", "beverage", "wine",
                                    "beer", "restaurant", "crop", "livestock", "brewer"),
    "Art and architecture": ("architect", "building", "painting", "painter", "sculpt", "artist", "art ",
                             "castle", "church building", "cathedral", "house", "palace", "monument", "museum"),
    "Engineering and technology": ("engineer", "technolog", "software", "computer", "aircraft", "ship", "locomotive",
                                   "railway", "rail ", "road", "highway", "bridge", "vehicle", "automobile",
                                   "spacecraft", "rocket", "electronic", "transport", "tunnel", "dam"),
    "History": ("history", "historical", "archaeolog", "ancient", "medieval", "empire", "dynast", "monarch",
                "nobility", "kings", "queens", "disaster", "assassinat", "revolution", "century"),
    "Social sciences and society": ("politic", "election", "government", "law", "court", "econom", "compan",
                                    "business", "organi", "education", "school", "universit", "sociolog", "crime",
                                    "murder", "police", "activist", "protest", "trade union", "bank"),
    "Geography and places": ("geograph", "village", "town", "cities", "city", "populated place", "count",
                             "district", "river", "lake", "mountain", "island", "park", "protected area",
                             "region", "province", "municipalit", "coast", "beach", "valley"),
}
_PATTERNS = {topic: re.compile(r"\b(?:" + "|".join(re.escape(k) for k in words) + ")", re.I)
             for topic, words in TOPIC_KEYWORDS.items()}


def topic_of(categories: Sequence[str]) -> tuple[str, str | None]:
    """(topic, the category that decided it); (`other`, None) when no category matches."""
    votes: dict[str, list[str]] = {}
    for category in categories:
        name = category.split(":", 1)[1] if category.casefold().startswith("category:") else category
        for topic, pattern in _PATTERNS.items():
            if pattern.search(name + " "):
                votes.setdefault(topic, []).append(name)
                break
    if not votes:
        return OTHER, None
    best = max(votes.values(), key=len)
    topic = next(t for t, names in votes.items() if len(names) == len(best))  # dicts keep insertion order
    return topic, votes[topic][0]
