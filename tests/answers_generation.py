"""Stand-in answers for MiroEval-style live query generation (templates miroeval/persona_queries,
research_necessity, closed_book_answer, answer_adequacy).

The stand-in model reads the rendered prompt back into the template's variables and answers with the
offline handlers, so a loopback-LLM refresh makes the same candidates and decisions as the heuristic
judge, through the real prompts, HTTP and the call cache."""
from __future__ import annotations

import re

from loopback_llm import message_text

from dreval_assets.benchmarks.miroeval.live.generation_offline import (answer_answer_adequacy, answer_closed_book_answer,
                                                   answer_persona_queries, answer_research_necessity)

HANDLERS = {  # a sentence that opens the template -> its offline handler
    "You write research requests for evaluating deep-research systems": answer_persona_queries,
    "You decide whether a research request needs external, current sources": answer_research_necessity,
    "Answer the research request below from your own knowledge only": answer_closed_book_answer,
    "You judge whether an answer, written without any search or sources": answer_answer_adequacy,
}
_LINE = {"topic": r"^Field: (.*)$", "subtopic": r"^Area within the field: (.*)$", "published_at": r"^Published: (.*)$"}
_BLOCKS = {"headline": "HEADLINE", "description": "SUMMARY", "query": "REQUEST", "answer": "ANSWER"}


def answer(request: dict, schema: dict | None) -> dict | None:
    for message in request.get("messages", []):
        text = message_text(message.get("content"))
        for opening, handler in HANDLERS.items():
            if text.startswith(opening):
                model, _ = handler(variables(text))
                return model.model_dump()
    return None


def variables(prompt: str) -> dict:
    found: dict = {}
    for name, pattern in _LINE.items():
        match = re.search(pattern, prompt, re.M)
        if match:
            found[name] = match.group(1)
    published = re.search(r"news item published (.*?)\. The item", prompt)
    if published:
        found["published_at"] = published.group(1)
    for name, marker in _BLOCKS.items():
        match = re.search(rf"<<<{marker}\n(.*?)\n{marker}>>>", prompt, re.S)
        if match:
            found[name] = match.group(1)
    personas = re.search(r"in this order:\n(.*?)\n\n", prompt, re.S)
    if personas:
        found["personas"] = personas.group(1)
        found["count"] = len(personas.group(1).splitlines())
    return found
