"""The full gold of a Wiki Live task: statements from the whole article, in batches.

The article (Markdown, `##`/`###` sections) is cut into chunks of whole sections packed in order up
to `chunk_chars`; a section longer than that is cut between paragraphs, its heading repeated. Each
chunk is one `wlc/gold_statements` judgment whose variables are the title, the chunk and a rough
expected count, nothing about the other chunks: the same chunk text is the same cache key, so a
re-run costs no call and an edit elsewhere in the article re-asks only the chunks that changed. The
task's gold is the union in article order, exact and near duplicates dropped (a fact the lead and a
section both state counts once). If any chunk has no answer the article gets no gold this time (it
is retried by the next refresh): a partial gold would make coverage look higher than it is.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ....judges.base import Judge, JudgmentRequest
from ....judges.prompts import fence_untrusted
from .wikilive_text import GoldStatements, clean_statements, dedupe_statements

GOLD_TEMPLATE = "wlc/gold_statements"
CHUNK_CHARS = 12_000  # about 3,000 tokens of article per call: a published Good Article is 3-6 calls
WORDS_PER_STATEMENT = 45  # the release's ~100 statements for a ~4,500-word article
_HEADING_RE = re.compile(r"^(#{1,6})\s+(.+?)\s*$")


@dataclass
class Gold:
    statements: list[str] | None  # None: no gold this time (`reason`)
    chunks: int = 0
    reason: str = ""
    na_reason: str | None = None
    retry: bool = False


@dataclass
class _Block:
    heading: str  # the section's heading line ('' for the lead)
    paragraphs: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n\n".join(([self.heading] if self.heading else []) + self.paragraphs)


def chunk_article(markdown: str, chunk_chars: int = CHUNK_CHARS) -> list[str]:
    """The article as chunks of whole sections (a long section cut between paragraphs)."""
    blocks: list[_Block] = [_Block("")]
    for part in (p.strip() for p in markdown.split("\n\n")):
        if not part:
            continue
        heading = _HEADING_RE.match(part)
        if heading and len(heading.group(1)) == 1:
            continue  # the `# Title` line: the title is its own variable
        if heading:
            blocks.append(_Block(part))
        else:
            blocks[-1].paragraphs.append(part)
    pieces: list[str] = []
    for block in blocks:
        if not block.paragraphs and not block.heading:
            continue
        if len(block.text()) <= chunk_chars:
            pieces.append(block.text())
            continue
        current = _Block(block.heading)
        for paragraph in block.paragraphs:
            if current.paragraphs and len(current.text()) + len(paragraph) + 2 > chunk_chars:
                pieces.append(current.text())
                current = _Block(block.heading)
            current.paragraphs.append(paragraph)
        pieces.append(current.text())
    chunks: list[str] = []
    for piece in pieces:
        if chunks and len(chunks[-1]) + len(piece) + 2 <= chunk_chars:
            chunks[-1] += "\n\n" + piece
        else:
            chunks.append(piece)
    return [c for c in chunks if c.strip()]


def gold_requests(title: str, markdown: str, labels: Mapping[str, str], chunk_chars: int) -> list[JudgmentRequest]:
    requests = []
    for chunk in chunk_article(markdown, chunk_chars):
        expected = max(1, math.ceil(len(chunk.split()) / WORDS_PER_STATEMENT))
        requests.append(JudgmentRequest(GOLD_TEMPLATE, {"title": title, "expected": expected,
                                                        "article": fence_untrusted(chunk)}, GoldStatements, labels))
    return requests


def extract_gold(articles: Sequence[tuple[str, str, Mapping[str, str]]], judge: Judge,
                 chunk_chars: int = CHUNK_CHARS) -> list[Gold]:
    """(title, Markdown, ledger labels) of each article -> its gold; all chunks of all articles go to
    the judge in one `judge_many`, so an endpoint judge runs them concurrently."""
    per_article = [gold_requests(title, markdown, labels, chunk_chars) for title, markdown, labels in articles]
    flat = [request for requests in per_article for request in requests]
    answers = iter(judge.judge_many(flat) if flat else [])
    results = []
    for requests in per_article:
        judgments = [next(answers) for _ in requests]
        results.append(_union(judgments, len(requests), judge.judge_id))
    return results


def _union(judgments: list, n_chunks: int, judge_id: str) -> Gold:
    if not n_chunks:
        return Gold(None, 0, "the article has no text to take statements from", "pipeline_failure")
    failed = [(i, j) for i, j in enumerate(judgments, 1) if not isinstance(j.answer, GoldStatements)]
    if failed:
        first = failed[0][1]
        bucket = first.na_reason or "pipeline_failure"
        return Gold(None, n_chunks, f"no gold statements: judge {judge_id} gave no answer for {len(failed)} of "
                                    f"{n_chunks} chunk(s) (chunk {failed[0][0]}: {bucket}: "
                                    f"{first.error or 'no detail'}); tried again next refresh", bucket, retry=True)
    statements = dedupe_statements(clean_statements([s for j in judgments for s in j.answer.statements], None))
    if not statements:
        return Gold(None, n_chunks, "no gold statements: the judge found none in the article", "pipeline_failure")
    return Gold(statements, n_chunks)
