"""The pages a report cites, by citation index, for report judgments that check something against
its sources (a chart against the pages its caption cites). Built from the parsed reference list and
`fetched_references`; page texts are read from the store only for the indices asked for."""
from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping, Sequence

import polars as pl

TextLoader = Callable[[Sequence[str]], Mapping[str, str]]  # page hashes -> texts (store.texts)
TEXTS_KEPT = 256  # page texts kept in memory once read (a slice's cited pages, a few MB)


@dataclass(frozen=True)
class CitedSource:
    index: int
    url: str | None  # None: the reference list gives this index no URL
    title: str = ""
    text: str | None = None  # the stored page text; None when there is none to read
    na_reason: str | None = None  # why there is no text: model_failure (no URL) or the fetch's own bucket
    detail: str = ""


class CitedSources:
    """(system, task) -> citation index -> the cited page, its text loaded on demand."""

    def __init__(self, parsed: pl.DataFrame, fetched: pl.DataFrame, load_texts: TextLoader) -> None:
        self._references: dict[tuple[str, str], dict[int, dict]] = {}
        for row in parsed.iter_rows(named=True):
            refs = json.loads(row.get("references") or "[]")
            self._references[(row["system"], row["task"])] = {int(r["index"]): r for r in refs}
        self._pages = {(r["system"], r["task"], r["url"]): r for r in fetched.iter_rows(named=True)}
        self._load_texts = load_texts
        self._kept: OrderedDict[str, str] = OrderedDict()  # page hash -> text, the last TEXTS_KEPT read
        self._lock = threading.Lock()  # TVIR's judge runs ask at once

    def of(self, system: str, task: str, indices: Iterable[int]) -> list[CitedSource]:
        """The cited sources of these indices, in the order given (each once)."""
        refs = self._references.get((system, task), {})
        found: list[CitedSource] = []
        readable: dict[int, str] = {}  # position in `found` -> page hash
        for index in dict.fromkeys(indices):
            ref = refs.get(index) or {}
            url, title = ref.get("url"), ref.get("title") or ""
            if not url:
                found.append(CitedSource(index, None, title, None, "model_failure",
                                         f"citation [{index}] has no URL in the reference list"))
                continue
            page = self._pages.get((system, task, url))
            if page is None or page["status"] != "ok" or not page.get("page_hash"):
                reason = (page or {}).get("na_reason") or ("data_accessibility" if page else "pipeline_failure")
                found.append(CitedSource(index, url, title, None, reason,
                                         (page or {}).get("detail") or "the URL was not fetched"))
                continue
            readable[len(found)] = page["page_hash"]
            found.append(CitedSource(index, url, page.get("title") or title))
        texts = self._texts(list(dict.fromkeys(readable.values()))) if readable else {}
        for position, key in readable.items():
            source = found[position]
            text = texts.get(key)
            found[position] = replace(source, text=text) if text else replace(
                source, na_reason="data_accessibility", detail="the page text is empty or not stored")
        return found

    def _texts(self, hashes: list[str]) -> Mapping[str, str]:
        """The texts of these pages: those read lately from memory (TVIR's judge runs each ask for the
        same pages), the others from the store."""
        with self._lock:
            found = {key: self._kept[key] for key in hashes if key in self._kept}
        missing = [key for key in hashes if key not in found]
        loaded = self._load_texts(missing) if missing else {}
        with self._lock:
            for key, text in loaded.items():
                self._kept[key] = text
                self._kept.move_to_end(key)
            while len(self._kept) > TEXTS_KEPT:
                self._kept.popitem(last=False)
        return {**found, **loaded}
