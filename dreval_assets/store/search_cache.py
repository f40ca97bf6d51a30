"""The `search_results` table: each web-search query's answer once per endpoint (fetch.search.SearchCache)."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Mapping, Sequence

import polars as pl

from .db import Store


class StoredSearchCache:
    def __init__(self, store: Store):
        self.store = store

    def get(self, endpoint: str, queries: Sequence[str]) -> dict[str, list[dict]]:
        rows = self.store.rows_for_keys("SELECT query, results FROM search_results WHERE endpoint = ? "
                                        "AND query IN (SELECT unnest(?))", queries, [endpoint])
        return {query: json.loads(results) for query, results in rows}

    def put(self, endpoint: str, answers: Mapping[str, list[dict]]) -> None:
        if not answers:
            return
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        frame = pl.DataFrame([{"endpoint": endpoint, "query": q, "results": json.dumps(r, ensure_ascii=False),
                               "n_results": len(r), "searched_at": now} for q, r in answers.items()],
                             schema={"endpoint": pl.String, "query": pl.String, "results": pl.String,
                                     "n_results": pl.Int32, "searched_at": pl.Datetime("us")})

        def work(con) -> None:
            con.register("_dreval_search", frame)
            con.execute("DELETE FROM search_results USING _dreval_search s "
                        "WHERE search_results.endpoint = s.endpoint AND search_results.query = s.query")
            con.unregister("_dreval_search")
            Store.insert_by_name(con, "search_results", frame)

        self.store.write(work)
