"""The toy's offline handler: 10 x the share of the request's longer words the report uses."""
import re

from dreval_assets.core.models import DimensionScore


def answer_toy_focus(variables):
    words = {w for w in re.findall(r"[a-z]{5,}", str(variables["query"]).lower())}
    used = {w for w in re.findall(r"[a-z]{5,}", str(variables["report"]).lower())}
    share = len(words & used) / len(words) if words else 0.0
    return DimensionScore(dimension_id="focus", score=max(1, round(10 * share)),
                          reason=f"{len(words & used)} of {len(words)} request words used"), {}


HANDLERS = {"toy_focus": answer_toy_focus}
