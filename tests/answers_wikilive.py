"""Stand-in answers for Wiki Live's gold statements (template wlc/gold_statements): the offline
extractor's statements of the part of the article the prompt quotes, so a run through the loopback
LLM gives the heuristic judge's gold."""
from __future__ import annotations

from loopback_llm import message_text

from dreval_assets.benchmarks.wlc.live.wikilive_text import offline_gold_statements

PROMPT = "We are building the answer key for an evaluation of encyclopedia articles"


def answer(request: dict, schema: dict | None) -> dict | None:
    for message in request.get("messages", []):
        text = message_text(message.get("content"))
        if PROMPT in text:
            title = text.split('The Wikipedia article "', 1)[1].split('" is the hidden reference', 1)[0]
            part = text.split("<<<ARTICLE\n", 1)[1].rsplit("\nARTICLE>>>", 1)[0]
            return {"statements": offline_gold_statements(part, title)}
    return None
