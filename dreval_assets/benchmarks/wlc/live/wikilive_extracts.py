"""The text of the articles a Wiki Live refresh keeps: `prop=extracts|info` (TextExtracts, plain text,
`exsectionformat=wiki`) for batches of pageids. TextExtracts returns the whole-article extract of one
page per call when several pages are asked for (it lowers `exlimit` to 1 and answers
`continue.excontinue`), so a batch is walked with `excontinue`; pages reported `missing`, `invalid` or
`redirect` are known after its first call. A batch call that fails is retried page by page, so one
bad page costs only itself. `prop=info` adds `lastrevid` (the revision the reference was taken from).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ....fetch.api import ApiError
from .wikilive_api import MediaWiki, continuation_of, flag, pages_of

EXTRACT_BATCH_SIZE = 20  # pageids per extracts call (TextExtracts' exlimit maximum)


@dataclass
class Text:
    """What the extracts calls said about one page: its text, or a reason (permanent or not)."""

    title: str | None = None
    extract: str | None = None
    revid: int | None = None
    length: int | None = None
    problem: str | None = None
    retry: bool = False  # the problem may pass (a failed call): try again next refresh


def fetch_texts(mw: MediaWiki, pageids: Sequence[int], batch_size: int = EXTRACT_BATCH_SIZE) -> dict[int, Text]:
    texts: dict[int, Text] = {}
    for start in range(0, len(pageids), batch_size):
        batch = list(pageids[start:start + batch_size])
        found, error = _extract_batch(mw, batch)
        texts.update(found)
        if error is None:
            continue
        if len(batch) == 1:
            texts[batch[0]] = Text(problem=f"extracts call failed: {error}", retry=True)
            continue
        for pageid in batch:  # one page at a time, so a page that breaks the call costs only itself
            if pageid not in found:
                single, single_error = _extract_batch(mw, [pageid])
                texts.update(single)
                if single_error is not None:
                    texts[pageid] = Text(problem=f"extracts call failed: {single_error}", retry=True)
    return texts


def _extract_batch(mw: MediaWiki, batch: list[int]) -> tuple[dict[int, Text], ApiError | None]:
    """The pages of one batch, walked with `excontinue`. When a call fails, the pages settled before it
    and the error come back (the caller asks for the others again)."""
    params = {"prop": "extracts|info", "explaintext": 1, "exsectionformat": "wiki",
              "pageids": "|".join(map(str, batch))}
    wanted = set(batch)
    found: dict[int, Text] = {}
    continuation: dict[str, str] = {}
    seen: set[tuple] = set()

    def settled(pageid: int) -> bool:
        return pageid in found and (found[pageid].extract is not None or found[pageid].problem is not None)

    for _ in range(len(batch) + 2):  # one extract per call, plus the odd empty round
        try:
            data = mw.query({**params, **continuation}, f"extracts of pageids {params['pageids']}")
            pages = pages_of(data, "extracts")
            continuation = continuation_of(data, "extracts")
        except ApiError as exc:
            return {p: text for p, text in found.items() if settled(p)}, exc
        for page in pages:
            if page.get("pageid") in wanted:
                _read_page(page, found.setdefault(page["pageid"], Text()))
        marker = tuple(sorted(continuation.items()))
        if not continuation or marker in seen or all(settled(p) for p in batch):
            break
        seen.add(marker)
    for pageid in batch:
        text = found.setdefault(pageid, Text())
        if text.problem is None and text.extract is None:
            text.problem = "the API answer has no extract for this page"
    return found, None


def _read_page(page: dict, into: Text) -> None:
    if isinstance(page.get("title"), str):
        into.title = page["title"]
    if isinstance(page.get("lastrevid"), int):
        into.revid = page["lastrevid"]
    if isinstance(page.get("length"), int):
        into.length = page["length"]
    if flag(page, "missing"):
        into.problem = "page is missing (deleted or moved away since it was listed)"
    elif flag(page, "invalid"):
        into.problem = f"invalid page: {page.get('invalidreason') or 'no reason given'}"
    elif flag(page, "redirect"):
        into.problem = "page is a redirect, not an article"
    elif "extract" in page:
        extract = page["extract"]
        if isinstance(extract, str):
            into.extract = extract
            if not extract.strip():
                into.problem = "extract is empty"
        else:
            into.problem = f"extract is not text ({type(extract).__name__})"
