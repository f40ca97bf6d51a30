"""The `pages` store: one fetch per normalised URL, texts once by content hash."""
from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Sequence

import polars as pl

from ..core.models import FetchResult
from .db import Store

RELEASE_BACKEND = "release"  # a page text a benchmark release ships (its own fetch), stored at import
# The table's types: a batch is never typed from its first rows (NULL HTTP statuses before a number).
_SCHEMA: dict[str, pl.DataType] = {
    "url_norm": pl.String, "url": pl.String, "status": pl.String, "backend": pl.String, "final_url": pl.String,
    "http_status": pl.Int32, "content_type": pl.String, "charset": pl.String, "title": pl.String,
    "text_hash": pl.String, "n_bytes": pl.Int64, "truncated": pl.Boolean, "blocked": pl.String,
    "na_reason": pl.String, "detail": pl.String, "attempts": pl.Int32, "fetched_at": pl.Datetime("us")}
_COLUMNS = tuple(_SCHEMA)


class PageStore:
    def __init__(self, store: Store):
        self.store = store

    def get(self, url_norms: Sequence[str]) -> dict[str, FetchResult]:
        """Stored outcomes by normalised URL, with their text when it was readable."""
        rows = self.store.rows_for_keys(
            f"SELECT {', '.join('p.' + c for c in _COLUMNS)}, t.text FROM pages p "
            "LEFT JOIN page_texts t USING (text_hash) WHERE p.url_norm IN (SELECT unnest(?))", url_norms)
        found = {}
        for row in rows:
            r = dict(zip(_COLUMNS + ("text",), row))
            backend = r["backend"] if r["backend"] == RELEASE_BACKEND else "cache"  # a release's page says so
            found[r["url_norm"]] = FetchResult(
                url=r["url"], status=r["status"], backend=backend, final_url=r["final_url"], title=r["title"] or "",
                content_type=r["content_type"] or "", text=r["text"], na_reason=r["na_reason"],
                detail=r["detail"] or "", http_status=r["http_status"], charset=r["charset"],
                n_bytes=r["n_bytes"] or 0, truncated=bool(r["truncated"]), blocked=r["blocked"],
                attempts=r["attempts"] or 0)
        return found

    def put(self, results: Sequence[tuple[str, FetchResult]]) -> None:
        """Upsert (url_norm, result) pairs; a refetch replaces the earlier outcome."""
        if not results:
            return
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        page_rows, text_rows = [], []
        for url_norm, r in results:
            text_hash = None
            if r.status == "ok" and r.text:
                text_hash = hashlib.sha256(r.text.encode("utf-8")).hexdigest()
                text_rows.append((text_hash, r.text, len(r.text)))
            page_rows.append((url_norm, r.url, r.status, r.backend, r.final_url, r.http_status, r.content_type,
                              r.charset, r.title, text_hash, r.n_bytes, r.truncated, r.blocked, r.na_reason,
                              r.detail, r.attempts, now))

        pages = pl.DataFrame(page_rows, schema=_SCHEMA, orient="row").unique("url_norm", keep="last")
        texts = pl.DataFrame(text_rows, schema={"text_hash": pl.String, "text": pl.String, "n_chars": pl.Int32},
                             orient="row")

        def work(con) -> None:  # frames, not executemany: one statement for any number of pages
            if texts.height:
                Store.insert_new_content(con, "page_texts", "text_hash", texts)
            con.register("_dreval_pages", pages)
            con.execute("DELETE FROM pages WHERE url_norm IN (SELECT url_norm FROM _dreval_pages)")
            con.unregister("_dreval_pages")
            Store.insert_by_name(con, "pages", pages)

        self.store.write(work)
