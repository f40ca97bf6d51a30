"""A structured judge request as instructor shapes, parses and re-asks it (its mode's handlers), sent with
openai's client as a plain POST. Going through instructor's patched `create` and openai's typed `create`
cost the judge worker ~45 % of its CPU per request in walks that give the same result every time:
instructor checks the response model for async validators seven times a request and prepares it twice,
and openai walks every message against its typed parameters. Here a model is prepared once, a mode that
leaves the messages alone adds the same tool or schema to every request, and the body goes out as it is.
The requests are byte for byte instructor's own (tests/test_structured_request.py)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import instructor
from instructor.core.exceptions import ResponseParsingError
from instructor.v2 import Provider, mode_registry
from instructor.v2.core.registry import ModeHandlers
from instructor.v2.validation.async_validators import AsyncValidationError
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError

# what instructor re-asks after (its retry loop's own list): an answer that did not parse or validate
INVALID_ANSWER = (ValidationError, json.JSONDecodeError, AsyncValidationError, ResponseParsingError)
_PROBE = [{"role": "user", "content": "probe"}]


@dataclass(frozen=True)
class StructuredShape:
    """One response model in one instructor mode: how its requests are shaped and its answers read."""

    handlers: ModeHandlers
    model: Any  # instructor's prepared response model (what its parser validates against)
    added: dict[str, Any] | None  # what the mode adds to every request when it leaves the messages alone

    def request(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The request body for these chat kwargs (model, messages, sampling settings)."""
        if self.added is not None:
            body = {**kwargs, **self.added}
        else:  # a mode that writes the schema into the messages shapes each request itself
            _, body = self.handlers.request_handler(response_model=self.model, kwargs=kwargs)
        if self.handlers.message_converter is not None:
            body["messages"] = self.handlers.message_converter(body["messages"], autodetect_images=False)
        body["messages"] = list(body["messages"])  # a re-ask appends to it: never to the caller's list
        return body

    def parse(self, completion: ChatCompletion) -> BaseModel:
        """The answer validated as instructor validates it (strict), or its error (INVALID_ANSWER, or
        IncompleteOutputException for an answer cut at its token budget)."""
        return self.handlers.response_parser(response=completion, response_model=self.model,
                                             validation_context=None, strict=True, stream=False, is_async=True)

    def reask(self, body: dict[str, Any], completion: ChatCompletion, error: Exception) -> dict[str, Any]:
        """The next request after an invalid answer: instructor's own re-ask for this mode."""
        return self.handlers.reask_handler(kwargs=body, response=completion, exception=error)


@lru_cache(maxsize=None)
def structured_shape(response_model: type[BaseModel], mode: instructor.Mode) -> StructuredShape:
    """Made once per model and mode (instructor rebuilds this for every request)."""
    handlers = mode_registry.get_handlers(Provider.OPENAI, mode)
    model, probe = handlers.request_handler(response_model=response_model, kwargs={"messages": list(_PROBE)})
    added = {key: value for key, value in probe.items() if key != "messages"} if probe["messages"] == _PROBE else None
    return StructuredShape(handlers, model, added)


async def post_chat(client: Any, body: dict[str, Any]) -> ChatCompletion:
    """One chat completion: openai's client with its errors, timeout and headers, without the walk of
    the body against its typed parameters (ours is plain JSON already)."""
    return await client.post("/chat/completions", body=body, cast_to=ChatCompletion)
