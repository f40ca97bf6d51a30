"""What one run's asset spent on the judge, from the ledger (`judge_ledger`, written by judges that
call an endpoint; the offline judge writes none)."""
from __future__ import annotations

import polars as pl

from .db import Store

SPEND_SQL = """
WITH fed AS (
    SELECT template, string_agg(suite || '.' || metric, ', ' ORDER BY suite, metric) AS metrics
    FROM metric_templates GROUP BY template
)
SELECT coalesce(l.system, '') AS system, coalesce(l.task, '') AS task, l.template,
       coalesce(f.metrics, '') AS metrics,
       count(*) AS requests,
       count(*) FILTER (WHERE NOT l.cache_hit) AS calls,
       count(*) FILTER (WHERE l.cache_hit) AS cache_hits,
       count(*) FILTER (WHERE l.outcome NOT IN ('ok', 'cache_hit')) AS failures,
       sum(l.tokens_in) AS tokens_in, sum(l.tokens_out) AS tokens_out,
       sum(l.cost) AS cost,
       count(*) FILTER (WHERE l.cost IS NULL) AS unpriced
FROM judge_ledger l LEFT JOIN fed f USING (template)
WHERE l.run_id = ? AND l.asset = ?
GROUP BY ALL
ORDER BY system, task, l.template
"""


def run_spend(store: Store, run_id: str, asset: str) -> pl.DataFrame:
    """Per system x task x template (system or task '' when the call was shared, e.g. a task's rubric
    or one batch for the whole run): requests, calls, cache hits, failures, tokens, cost, unpriced
    calls, and the metrics the template feeds (`metric_templates`)."""
    return store.query(SPEND_SQL, [run_id, asset])
