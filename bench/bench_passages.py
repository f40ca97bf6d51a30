"""Speed of passage selection on very large pages (50,000 and 200,000 words, 8 claims).

    python bench/bench_passages.py

Builds a deterministic synthetic page of mixed topics with numbers, then times
``split_passages`` and ``select_passages`` (best of 3).
"""
from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import best_of  # noqa: E402
from dreval_assets.core.passages import estimate_tokens, select_passages, split_passages  # noqa: E402

TOPICS = [
    "electric car sales battery charging China Europe registrations subsidy",
    "wind turbine offshore capacity gigawatt auction grid connection",
    "semiconductor wafer foundry node lithography export controls",
    "wheat harvest drought yield fertilizer export prices",
    "central bank interest rate inflation bond yields mortgage",
    "vaccine trial efficacy participants dose antibodies",
    "satellite launch orbit rocket payload reusable booster",
    "steel production emissions hydrogen furnace plant tonnes",
]
FILLER = ("the of and in to a is was for on with as by that from at which has been "
          "report year market growth share total increase compared").split()


def make_page(words: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    paragraphs, count = [], 0
    while count < words:
        topic = rng.choice(TOPICS).split()
        sentences = []
        for _ in range(rng.randint(3, 9)):
            n = rng.randint(8, 25)
            tokens = [rng.choice(topic) if rng.random() < 0.35 else rng.choice(FILLER) for _ in range(n)]
            if rng.random() < 0.5:
                tokens.insert(rng.randrange(n), f"{rng.randint(1, 99_999):,}")
            sentences.append(" ".join(tokens).capitalize() + ".")
            count += len(tokens)
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


QUERIES = [
    "Electric car registrations in China reached 8,100 in 2023.",
    "Offshore wind capacity auctions awarded 12,500 gigawatt of grid connection.",
    "Export controls on lithography hit foundry node 3.",
    "The wheat harvest fell 41,200 tonnes after the drought.",
    "The central bank raised the interest rate as inflation hit 45%.",
    "Vaccine efficacy in the trial was 95 percent among 30,000 participants.",
    "A reusable booster put the payload into orbit on launch 77.",
    "Hydrogen furnace plants cut steel emissions by 1,250 tonnes.",
]


def main() -> None:
    for words in (50_000, 200_000):
        page = make_page(words)
        split_s = best_of(3, lambda: split_passages(page))
        select_s = best_of(3, lambda: select_passages(page, QUERIES, 4000))
        selection = select_passages(page, QUERIES, 4000)
        print(f"{len(page.split()):,}-word page ({len(page):,} chars, {len(split_passages(page)):,} passages), "
              f"{len(QUERIES)} claims, budget 4000 tokens: split {split_s * 1000:.0f} ms, "
              f"select {select_s * 1000:.0f} ms -> {len(selection.passages)} passages, "
              f"{estimate_tokens(selection.text)} tokens, {selection.kept_chars:,} chars kept")


if __name__ == "__main__":
    main()
