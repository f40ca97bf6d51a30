"""The pages a report cites, by citation index, for report judgments that check something against
its sources (a chart against the pages its caption cites). Built from the parsed reference list and
`fetched_references`; page texts are read from the store only for the indices asked for."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Mapping, Sequence

import polars as pl

TextLoader = Callable[[Sequence[str]], Mapping[str, str]]  # page hashes -> texts (store.texts)


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
        texts = self._load_texts(list(readable.values())) if readable else {}
        for position, key in readable.items():
            source = found[position]
            text = texts.get(key)
            found[position] = replace(source, text=text) if text else replace(
                source, na_reason="data_accessibility", detail="the page text is empty or not stored")
        return found
