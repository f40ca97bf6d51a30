"""The scores of a home's earlier judges: kept when the judge is switched (`dreval judge set`), shown
beside the current judge's on the leaderboard (each judge its own table, never one mean)."""
from __future__ import annotations

import polars as pl

from .db import Store

UNJUDGED = "none"  # the judge of metrics computed without one: they belong to every judge's table

# metric_scores, plus each earlier judge's kept rows for the partitions metric_scores holds no rows of
# that judge for (once a partition is re-scored under that judge again, its new rows win).
SCORES_OF_EVERY_JUDGE = f"""
SELECT * FROM metric_scores
UNION ALL BY NAME
SELECT * EXCLUDE (kept_at) FROM earlier_judge_scores e
WHERE NOT EXISTS (SELECT 1 FROM metric_scores m WHERE m.system = e.system AND m.task = e.task AND m.judge = e.judge)
"""


def keep_earlier_judge_scores(store: Store) -> dict[str, int]:
    """Keep every judged metric_scores row (replacing what was kept of the same judge and partition);
    returns the rows kept by judge."""
    kept: dict[str, int] = {}

    def work(con) -> None:
        con.execute(f"""DELETE FROM earlier_judge_scores e WHERE EXISTS (SELECT 1 FROM metric_scores m
                        WHERE m.judge <> '{UNJUDGED}' AND m.system = e.system AND m.task = e.task
                        AND m.judge = e.judge)""")
        con.execute(f"INSERT INTO earlier_judge_scores BY NAME SELECT *, now() AS kept_at FROM metric_scores "
                    f"WHERE judge <> '{UNJUDGED}'")
        kept.update(con.execute("SELECT judge, count(*) FROM metric_scores WHERE judge <> ? GROUP BY judge "
                                "ORDER BY judge", [UNJUDGED]).fetchall())

    store.write(work)
    return kept


def scores_of_every_judge(store: Store) -> pl.DataFrame:
    """metric_scores with the earlier judges' kept rows, ordered by partition."""
    return store.query(f"SELECT * FROM ({SCORES_OF_EVERY_JUDGE}) ORDER BY system, task")
