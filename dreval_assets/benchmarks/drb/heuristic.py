"""DeepResearch Bench's offline handler: RACE criteria by key-word coverage (relative, not quality)."""
from __future__ import annotations

from typing import Any, Mapping

from pydantic import BaseModel

from ...core.checklist_match import key_words
from ...core.models import RaceCriterionScores, RaceScores
from ...judges.readable import READS_KEY_WORDS, require_readable

def answer_race_scores(variables: Mapping[str, Any]) -> tuple[BaseModel, dict[str, Any]]:
    """`race_scores`: per criterion, 10 x the share of its key words (criterion and explanation) each
    article contains. RACE divides target by target + reference, so this measures relative coverage."""
    article_a, article_b = str(variables["article_a"]), str(variables["article_b"])
    criteria = " ".join(f"{c['criterion']} {c['explanation']}" for c in variables["criteria_list"])
    require_readable(READS_KEY_WORDS, article_a=article_a, article_b=article_b, criteria=criteria)
    words_a, words_b = key_words(article_a), key_words(article_b)
    scores = []
    for criterion in variables["criteria_list"]:
        wanted = key_words(f"{criterion['criterion']} {criterion['explanation']}")
        a = len(wanted & words_a) / len(wanted) if wanted else 0.0
        b = len(wanted & words_b) / len(wanted) if wanted else 0.0
        scores.append(RaceCriterionScores(criterion_id=criterion["criterion_id"], score_a=round(10 * a, 1),
                                          score_b=round(10 * b, 1),
                                          reason=f"key words present: A {a:.0%}, B {b:.0%} of {len(wanted)}"))
    return RaceScores(scores=scores), {}


HANDLERS = {"drb/race_scores": answer_race_scores, "drb/race_scores_zh": answer_race_scores}
