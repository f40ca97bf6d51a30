"""Images in DuckDB: bytes once by content hash (`image_blobs`), remote images once per URL
(`remote_images`), and what the report_images stage needs to know about reports and tasks."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Iterable, Sequence

import polars as pl

from ..core.images import content_hash
from ..fetch.images import RemoteImage
from .db import Store

BLOB_SCHEMA = {"image_hash": pl.String, "mime": pl.String, "n_bytes": pl.Int32, "data": pl.Binary}
_REMOTE_SCHEMA: dict[str, pl.DataType] = {  # the table's types, never guessed from a batch's first rows
    "url_norm": pl.String, "url": pl.String, "status": pl.String, "image_hash": pl.String,
    "content_type": pl.String, "http_status": pl.Int32, "detail": pl.String, "na_reason": pl.String,
    "fetched_at": pl.Datetime("us")}


def blob_frame(images: Iterable[tuple[bytes, str]]) -> pl.DataFrame:
    """`image_blobs` rows of (bytes, mime) pairs, one per content hash."""
    rows = {content_hash(data): (mime, data) for data, mime in images}
    return pl.DataFrame([{"image_hash": h, "mime": m, "n_bytes": len(d), "data": d} for h, (m, d) in rows.items()],
                        schema=BLOB_SCHEMA)


def image_blobs(store: Store, hashes: Sequence[str]) -> dict[str, tuple[str, bytes]]:
    """image hash -> (mime, bytes) of the stored images among `hashes`."""
    rows = store.rows_for_keys("SELECT image_hash, mime, data FROM image_blobs WHERE image_hash IN (SELECT unnest(?))",
                               (h for h in hashes if h))
    return {h: (mime, bytes(data)) for h, mime, data in rows}


class RemoteImageStore:
    """The remote-image cache of `fetch/images.RemoteImages`: outcomes by normalised URL, bytes in
    `image_blobs`, so a URL is fetched once across systems and runs."""

    def __init__(self, store: Store):
        self.store = store

    def get(self, url_norms: Sequence[str]) -> dict[str, RemoteImage]:
        rows = self.store.rows_for_keys(
            "SELECT r.url_norm, r.url, r.status, r.content_type, r.http_status, r.detail, r.na_reason, b.data "
            "FROM remote_images r LEFT JOIN image_blobs b USING (image_hash) "
            "WHERE r.url_norm IN (SELECT unnest(?))", url_norms)
        return {key: RemoteImage(url, status, bytes(data) if data is not None else None, content_type, http_status,
                                 detail or "", na_reason, backend="cache")
                for key, url, status, content_type, http_status, detail, na_reason, data in rows
                if status != "ok" or data is not None}

    def put(self, outcomes: Sequence[tuple[str, RemoteImage]]) -> None:
        """Upsert outcomes; a readable image's bytes go to `image_blobs` in the same transaction."""
        if not outcomes:
            return
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        rows = [(key, r.url, r.status, content_hash(r.data) if r.data else None, r.content_type, r.http_status,
                 r.detail, r.na_reason, now) for key, r in outcomes]
        frame = pl.DataFrame(rows, schema=_REMOTE_SCHEMA, orient="row").unique("url_norm", keep="last")
        blobs = blob_frame((r.data, r.content_type or "application/octet-stream") for _, r in outcomes if r.data)

        def work(con) -> None:
            if blobs.height:
                Store.insert_new_content(con, "image_blobs", "image_hash", blobs)
            con.register("_dreval_remote", frame)
            con.execute("DELETE FROM remote_images WHERE url_norm IN (SELECT url_norm FROM _dreval_remote)")
            con.unregister("_dreval_remote")
            Store.insert_by_name(con, "remote_images", frame)

        self.store.write(work)


def imported_base_dirs(store: Store, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(system, task) -> the folder an imported report's relative image paths start from."""
    wanted = pl.DataFrame([{"system": s, "task": t} for s, t in keys], schema={"system": pl.String, "task": pl.String})
    if wanted.height == 0:
        return {}
    with store.connect() as con:
        con.register("_dreval_wanted", wanted)
        rows = con.execute("SELECT r.system, r.task, r.base_dir FROM imported_reports r "
                           "JOIN _dreval_wanted USING (system, task) WHERE r.base_dir IS NOT NULL").fetchall()
    return {(s, t): base for s, t, base in rows}


def task_sources(store: Store, tasks: Sequence[str] | None = None) -> dict[str, str]:
    """task -> where it was registered from (`demo`, `import:<benchmark>:<release path>`, ...)."""
    frame = store.query("SELECT task, source FROM registered_tasks")
    found = dict(frame.iter_rows())
    return found if tasks is None else {t: found[t] for t in tasks if t in found}


def stored_local_figures(store: Store) -> pl.DataFrame:
    """Folder systems' figures with a local image source as last materialised, with the report's path
    and the task's attachments and source: what the planner re-hashes to see a changed image file."""
    return store.query(
        "SELECT i.system, i.task, i.figure, i.src, i.image_hash, r.source_path, t.attachments, g.source "
        "FROM report_images i JOIN reports r USING (system, task) JOIN registered_systems s USING (system) "
        "LEFT JOIN tasks t USING (task) LEFT JOIN registered_tasks g USING (task) "
        "WHERE s.kind = 'folder' AND i.src <> '' AND NOT regexp_matches(lower(i.src), '^(https?:|//|data:)') "
        "ORDER BY i.system, i.task, i.figure")
