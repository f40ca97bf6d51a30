"""A structured judge request sent by our call path is instructor's own request, in every mode: the same
body for the first ask and for the re-ask after an invalid answer, the same validated answer, and the
same failure when no answer validates (judges/structured_request.py)."""
from __future__ import annotations

import asyncio

import instructor
import openai
import pytest
from pydantic import BaseModel, Field

from dreval_assets.judges.base import JudgmentRequest
from dreval_assets.judges.judge_call import PreparedCall
from dreval_assets.judges.openai_calls import INSTRUCTOR_MODES, EndpointCalls, endpoint_of, wire_model
from dreval_assets.judges.openai_config import OpenAIJudgeConfig
from dreval_assets.judges.structured_request import structured_shape
from loopback_llm import LoopbackLLM, answer_override

PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


class Scores(BaseModel):
    comprehensiveness: int = Field(ge=0, le=10, description="0-10")
    reason: str = ""


def messages(visual: bool) -> list[dict]:
    user: object = "Score the article. 中文段落也要读。"
    if visual:
        user = [{"type": "text", "text": "Score the figure."}, {"type": "image_url", "image_url": {"url": PIXEL}}]
    return [{"role": "system", "content": "You are a strict judge."}, {"role": "user", "content": user}]


def bodies(llm: LoopbackLLM) -> list[dict]:
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in llm.requests]


async def instructors_own(llm: LoopbackLLM, mode: str, msgs: list[dict]) -> BaseModel:
    plain = openai.AsyncOpenAI(base_url=llm.base_url, api_key="k", max_retries=0)
    client = instructor.from_openai(plain, mode=INSTRUCTOR_MODES[mode])
    answer = await client.chat.completions.create(
        model="m", messages=msgs, response_model=instructor.openai_schema(Scores), max_retries=1,
        temperature=0.0, max_tokens=300, seed=0)
    await plain.close()
    return answer


async def ours(llm: LoopbackLLM, mode: str, msgs: list[dict]):
    config = OpenAIJudgeConfig(model="m", base_url=llm.base_url, api_key="k", mode=mode, worker="off",
                               validation_retries=1, seed=0)
    endpoint = endpoint_of(config)
    call = PreparedCall(JudgmentRequest("scores", {}, Scores), msgs, "h", "key", 100, "m", 300, 0.0)
    return await EndpointCalls(config).call(call, endpoint.client(), endpoint.semaphore, endpoint.limiter)


@pytest.mark.parametrize("visual", [False, True], ids=["text", "image"])
@pytest.mark.parametrize("mode", list(INSTRUCTOR_MODES))
def test_each_request_is_instructors_own_for_the_first_ask_and_the_reask(mode, visual):
    msgs = messages(visual)
    sent = []
    for ask in (instructors_own, ours):  # a server each: the answers' tool call ids count its requests
        with LoopbackLLM(answer=lambda request, schema: {"comprehensiveness": 7, "reason": "deep"}) as llm:
            llm.fail_next(answer_override({"comprehensiveness": 11}))  # out of range: one re-ask
            sent.append((asyncio.run(ask(llm, mode, msgs)), bodies(llm)))
    (reference, expected), (outcome, sent) = sent
    assert len(expected) == 2 and sent == expected  # the re-ask carries instructor's correction messages
    assert outcome.answer == Scores(comprehensiveness=7, reason="deep") == Scores(**reference.model_dump())
    assert type(outcome.answer) is Scores and outcome.trail == ["invalid answer", "ok"]
    assert outcome.validation_retries == 1 and outcome.na_reason is None
    assert msgs == messages(visual)  # the caller's messages are never appended to


def test_an_answer_that_never_validates_fails_after_every_reask_and_says_why():
    with LoopbackLLM(answer=lambda request, schema: {"comprehensiveness": "many"}) as llm:
        outcome = asyncio.run(ours(llm, "tools", messages(False)))
    assert outcome.answer is None and outcome.na_reason == "pipeline_failure"
    assert outcome.error.startswith("answer failed validation after 2 attempt(s): comprehensiveness:")
    assert outcome.trail == ["invalid answer", "invalid answer"] and llm.n_calls == 2


def test_the_shape_is_made_once_per_model_and_mode():
    tools = structured_shape(wire_model(Scores), instructor.Mode.TOOLS)
    assert structured_shape(wire_model(Scores), instructor.Mode.TOOLS) is tools
    assert set(tools.added) == {"tools", "tool_choice"}  # the same tool on every request
    md_json = structured_shape(wire_model(Scores), instructor.Mode.MD_JSON)
    assert md_json.added is None  # it writes the schema into the messages: shaped per request
