"""How many tokens a judge may answer with: every LLM request carries `max_tokens`, so a model that
rambles (a small local model may run on for thousands of tokens) is cut, not waited for.

The budget is sized from the answer the template asks for: its response model's JSON schema, walked
field by field (a free-text field ~`TEXT_TOKENS`, a number, flag or label ~`SCALAR_TOKENS`, a list as
many items as the request's longest list variable, else `LIST_ITEMS`), plus JSON syntax. A request
that knows its answer's size better (statement extraction: proportional to the text it reads) sets
`JudgmentRequest.answer_tokens`. `DREVAL_JUDGE_MAX_TOKENS` overrides: a number for every template, or
JSON `{"<template>": n, "*": n}`."""
from __future__ import annotations

import json
import os
from functools import lru_cache
from typing import Any, Mapping

from pydantic import BaseModel

from ..errors import ConfigError

TEXT_TOKENS = 80  # a reason, an evidence span, a statement: a sentence or two
SCALAR_TOKENS = 8  # a number, a flag, a label, a key and its quotes
LIST_ITEMS = 10  # items of a top-level list whose length no variable tells
NESTED_ITEMS = 4  # items of a list inside a list's item (a rubric dimension's criteria)
SYNTAX = 1.2  # braces, quotes, commas and whitespace around the values
FLOOR, CEILING = 128, 4096


@lru_cache(maxsize=None)
def model_schema(response_model: type[BaseModel]) -> dict[str, Any]:
    """A response model's JSON schema, computed once per model (pydantic builds it anew on every call);
    shared, so never changed by its readers."""
    return response_model.model_json_schema()


def answer_budget(response_model: type[BaseModel], variables: Mapping[str, Any], template: str,
                  asked: int | None = None, overrides: Mapping[str, int] | None = None) -> int:
    """The request's `max_tokens`: the override for its template (or `*`), else what the request
    asked for (at least FLOOR), else the schema's estimate within [FLOOR, CEILING]."""
    overrides = overrides or {}
    if template in overrides:
        return overrides[template]
    if "*" in overrides:
        return overrides["*"]
    if asked is not None:
        return max(FLOOR, asked)
    schema = model_schema(response_model)
    items = max((len(v) for v in variables.values() if isinstance(v, (list, tuple))), default=LIST_ITEMS)
    return max(FLOOR, min(CEILING, int(SYNTAX * _tokens(schema, schema.get("$defs", {}), items or 1)) + 32))


def _tokens(node: dict, defs: dict, items: int) -> float:
    """Tokens of a value of this schema; `items` is the length of the next list met (lists inside it
    take NESTED_ITEMS)."""
    if "$ref" in node:
        return _tokens(defs[node["$ref"].rsplit("/", 1)[-1]], defs, items)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            return max(_tokens(n, defs, items) for n in node[key])
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        return sum(SCALAR_TOKENS + _tokens(n, defs, items) for n in node.get("properties", {}).values())
    if kind == "array":
        return items * _tokens(node.get("items", {}), defs, NESTED_ITEMS)
    if kind == "string" and "enum" not in node:
        return TEXT_TOKENS
    return SCALAR_TOKENS


def overrides_from_env(setting: str | None = None) -> dict[str, int]:
    """`DREVAL_JUDGE_MAX_TOKENS`: `2048` (every template) or `{"statement_extraction": 3000, "*": 1024}`."""
    setting = os.environ.get("DREVAL_JUDGE_MAX_TOKENS", "") if setting is None else setting
    if not setting.strip():
        return {}
    try:
        value = json.loads(setting)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"DREVAL_JUDGE_MAX_TOKENS={setting!r}: a number or a JSON object of numbers") from exc
    table = {"*": value} if isinstance(value, int) else value
    if not isinstance(table, dict) or not all(isinstance(v, int) and v > 0 for v in table.values()):
        raise ConfigError(f"DREVAL_JUDGE_MAX_TOKENS={setting!r}: token counts must be positive integers")
    return table
