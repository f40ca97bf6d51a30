"""Remote images of report figures: the live fetcher's safety (URL checks on every redirect hop,
private addresses refused, byte cap, retries), the content type checked to be image/*, and one fetch
per URL across systems (a cache, like pages). Offline, only what the cache holds is used."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol, Sequence

from ..core.images import MAX_IMAGE_BYTES
from .live import LiveFetcher
from .urls import url_key

OFFLINE_DETAIL = "remote image not fetched: live fetching is off (DREVAL_FETCH=sandbox)"


@dataclass(frozen=True)
class RemoteImage:
    """One URL's outcome. `data` is set exactly when status is ok (an image/* body within the cap);
    `na_reason` says whose failure an invalid one is."""

    url: str
    status: str  # ok | invalid
    data: bytes | None = None
    content_type: str | None = None
    http_status: int | None = None
    detail: str = ""
    na_reason: str | None = None
    backend: str = "live"  # live | cache


class RemoteImageCache(Protocol):
    def get(self, url_norms: Sequence[str]) -> dict[str, RemoteImage]: ...

    def put(self, outcomes: Sequence[tuple[str, RemoteImage]]) -> None: ...


class RemoteImages:
    def __init__(self, cache: RemoteImageCache | None = None, live: LiveFetcher | None = None,
                 refetch_failed: bool = False, max_bytes: int = MAX_IMAGE_BYTES):
        self.cache = cache
        self.live = live
        self.refetch_failed = refetch_failed
        self.max_bytes = max_bytes

    def get_many(self, urls: Sequence[str]) -> dict[str, RemoteImage]:
        """url -> outcome, each distinct URL (by its normalised key) fetched at most once."""
        keys = {url: url_key(url) for url in dict.fromkeys(urls)}
        stored = self.cache.get(list(set(keys.values()))) if self.cache else {}
        usable = {k: r for k, r in stored.items() if r.status == "ok" or not (self.refetch_failed and self.live)}
        missing = list(dict.fromkeys(k for k in keys.values() if k not in usable))
        fetched: dict[str, RemoteImage] = {}
        if missing and self.live is not None:
            first = {key: next(u for u, k in keys.items() if k == key) for key in missing}
            bodies = self.live.fetch_bodies(list(first.values()))
            fetched = {key: self._outcome(url, body) for (key, url), body in zip(first.items(), bodies)}
            if self.cache:
                self.cache.put(list(fetched.items()))
        found = {**usable, **fetched}
        offline = RemoteImage("", "invalid", detail=OFFLINE_DETAIL, na_reason="data_accessibility", backend="none")
        return {url: found.get(key) or replace(offline, url=url) for url, key in keys.items()}

    def _outcome(self, url: str, body) -> RemoteImage:
        content_type = (body.content_type or "").split(";", 1)[0].strip().lower() or None
        common = dict(content_type=content_type, http_status=body.status)
        if not body.ok:
            what = "image over the cap" if "larger than" in body.detail else "remote image unavailable"
            return RemoteImage(url, "invalid", detail=f"{what}: {body.detail}", na_reason="data_accessibility",
                               **common)
        if not (content_type or "").startswith("image/"):
            return RemoteImage(url, "invalid", detail=f"not an image content type: {content_type or 'none given'}",
                               na_reason="model_failure", **common)
        if len(body.data) > self.max_bytes:
            return RemoteImage(url, "invalid", detail=f"image over the {self.max_bytes:,}-byte cap",
                               na_reason="data_accessibility", **common)
        if not body.data:
            return RemoteImage(url, "invalid", detail="empty image body", na_reason="model_failure", **common)
        return RemoteImage(url, "ok", data=body.data, **common)
