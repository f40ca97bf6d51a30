"""The vision judge plumbing: visual requests through the real openai + instructor clients to our
loopback server (image parts, cache key, ledger, vision model), and the offline judge's refusal."""
import io
import sys
from pathlib import Path

import pytest
from PIL import Image

sys.path.insert(0, str(Path(__file__).parent))

from loopback_llm import IMAGE_TOKENS, LoopbackLLM, image_parts, status  # noqa: E402
from judge_answers import dreval_answer  # noqa: E402

from dreval_assets.core.images import content_hash  # noqa: E402
from dreval_assets.core.models import ClaimVerdict  # noqa: E402
from dreval_assets.judges.base import ImageInput, JudgmentRequest  # noqa: E402
from dreval_assets.judges.heuristic import HeuristicJudge  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig, Price  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402

SOURCE = {"source_url": "https://ferries.example/lowmarsh", "source_title": "Lowmarsh note",
          "source_text": "The Lowmarsh ferry carried 41,200 passengers in 2023, up from 36,900 in 2022."}


def png(colour: tuple[int, int, int], size=(48, 32)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def image(name: str, data: bytes) -> ImageInput:
    return ImageInput(name=name, sha256=content_hash(data), mime="image/png", data=data)


def visual(*images: ImageInput, claim="The Lowmarsh ferry carried 41,200 passengers in 2023.") -> JudgmentRequest:
    return JudgmentRequest("claim_verdict", {"claim": claim, **SOURCE}, ClaimVerdict,
                           {"system": "s1", "task": "t1"}, images=tuple(images))


def make_judge(llm, calls, **overrides) -> OpenAIJudge:
    settings = dict(model="text-model", base_url=llm.base_url, api_key="sk-test", timeout_s=5,
                    backoff_base_s=0.01, max_attempts=3, prices={"text-model": Price(1.0, 2.0)})
    settings.update(overrides)
    return OpenAIJudge(OpenAIJudgeConfig(**settings), calls)


def ledger(calls, columns: str):
    return calls.store.query(f"SELECT {columns} FROM judge_ledger ORDER BY called_at, call_id").rows()


RED, BLUE = png((200, 20, 20)), png((20, 20, 200))


def test_image_parts_reach_the_server_after_the_text_in_order(llm, calls):
    [judgment] = make_judge(llm, calls).judge_many([visual(image("a.png", RED), image("b.png", BLUE))])
    assert judgment.answer is not None  # the stand-in model read the prompt inside the part list
    [request] = llm.requests
    [message] = [m for m in request["messages"] if m["role"] == "user"]
    kinds = [part["type"] for part in message["content"]]
    assert kinds == ["text", "image_url", "image_url"] and "41,200" in message["content"][0]["text"]
    assert message["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert [i["sha256"] for i in request["_images"]] == [content_hash(RED), content_hash(BLUE)]
    assert image_parts(request) == [("image/png", RED), ("image/png", BLUE)] and llm.n_image_parts == 2


def test_ledger_counts_image_bytes_and_reported_image_tokens(llm, calls):
    judge = make_judge(llm, calls)
    judge.judge_many([visual(image("a.png", RED), image("b.png", BLUE)), visual(claim="No image here 41,200.")])
    rows = ledger(calls, "image_bytes, image_tokens, tokens_in")
    by_bytes = sorted(rows)
    assert by_bytes[0][:2] == (0, None)  # a text request: no image sent, none reported
    assert by_bytes[1][:2] == (len(RED) + len(BLUE), 2 * IMAGE_TOKENS)
    assert by_bytes[1][2] > 2 * IMAGE_TOKENS  # the endpoint's prompt tokens include the images
    assert judge.stats.metadata()["judge_image_bytes"] == len(RED) + len(BLUE)
    per_system = calls.store.query("SELECT calls, image_bytes, image_tokens FROM judge_cost_by_system").rows()
    assert per_system == [(2, len(RED) + len(BLUE), 2 * IMAGE_TOKENS)]  # what a report's visual judging sent


def test_image_tokens_are_null_when_the_endpoint_does_not_report_them(calls):
    with LoopbackLLM(answer=dreval_answer, report_image_tokens=False) as llm:
        make_judge(llm, calls).judge_many([visual(image("a.png", RED))])
    assert ledger(calls, "image_bytes, image_tokens") == [(len(RED), None)]


def test_a_retry_sends_the_images_again_and_the_ledger_counts_both(llm, calls):
    llm.fail_next(status(503))
    make_judge(llm, calls).judge_many([visual(image("a.png", RED))])
    assert llm.n_calls == 2 and ledger(calls, "outcome, image_bytes") == [("ok", 2 * len(RED))]


def test_cache_key_follows_image_bytes_not_names(llm, calls):
    judge = make_judge(llm, calls)
    base = judge.cache_key(visual(image("a.png", RED)))
    assert judge.cache_key(visual(image("renamed.png", RED))) == base
    assert judge.cache_key(visual(image("a.png", BLUE))) != base
    assert judge.cache_key(visual()) != base  # the same prompt without its image
    assert judge.cache_key(visual(image("a.png", RED), image("b.png", BLUE))) != base


def test_a_cached_visual_answer_is_not_asked_again(llm, calls):
    first = make_judge(llm, calls).judge_many([visual(image("a.png", RED))])
    again = make_judge(llm, calls)
    second = again.judge_many([visual(image("same-bytes-other-name.png", RED))])
    assert llm.n_calls == 1 and second[0].provenance.cache_hit and second[0].answer == first[0].answer
    assert ledger(calls, "cache_hit, image_bytes") == [(False, len(RED)), (True, 0)]
    make_judge(llm, calls).judge_many([visual(image("a.png", BLUE))])  # a changed image is asked
    assert llm.n_calls == 2


def test_a_vision_model_answers_visual_requests_and_the_ledger_says_so(llm, calls):
    judge = make_judge(llm, calls, vision_model="vision-model",
                       prices={"text-model": Price(1.0, 2.0), "vision-model": Price(10.0, 20.0)})
    [seen, read] = judge.judge_many([visual(image("a.png", RED)), visual(claim="Text only: 41,200 passengers.")])
    assert sorted(r["model"] for r in llm.requests) == ["text-model", "vision-model"]
    assert seen.provenance.model == "vision-model" and read.provenance.model == "text-model"
    assert seen.provenance.judge_id == read.provenance.judge_id == "text-model"  # one judge, two models
    tokens = seen.provenance.tokens_in, seen.provenance.tokens_out
    assert seen.provenance.cost == pytest.approx((tokens[0] * 10 + tokens[1] * 20) / 1e6)
    rows = dict(ledger(calls, "model, cost"))
    assert rows["vision-model"] == pytest.approx(seen.provenance.cost)
    assert calls.store.query("SELECT model FROM judge_cache WHERE cache_key = ?", [seen.provenance.cache_key]).item() \
        == "vision-model"


def test_the_vision_model_is_part_of_the_cache_key_and_unpriced_when_it_has_no_price(llm, calls):
    plain = make_judge(llm, calls).cache_key(visual(image("a.png", RED)))
    judge = make_judge(llm, calls, vision_model="vision-model")
    assert judge.cache_key(visual(image("a.png", RED))) != plain
    assert judge.cache_key(visual()) == make_judge(llm, calls).cache_key(visual())  # text requests unchanged
    judge.judge_many([visual(image("a.png", RED))])
    assert ledger(calls, "model, cost") == [("vision-model", None)]  # never the text model's price
    assert judge.stats.metadata()["judge_cost"] == "unpriced"


def test_the_vision_model_setting_is_read_from_the_environment(monkeypatch):
    monkeypatch.setenv("DREVAL_JUDGE_MODEL", "text-model")
    monkeypatch.setenv("DREVAL_JUDGE_VISION_MODEL", "vision-model")
    config = OpenAIJudgeConfig.from_env()
    assert config.model_for(True) == "vision-model" and config.model_for(False) == "text-model"
    monkeypatch.delenv("DREVAL_JUDGE_VISION_MODEL")
    assert OpenAIJudgeConfig.from_env().model_for(True) == "text-model"


def test_the_offline_judge_cannot_see_images_without_a_measuring_handler():
    request = JudgmentRequest("mmdr/no_such_visual_template", {}, ClaimVerdict, {"system": "s1"},
                              images=(image("a.png", RED),))
    [judgment] = HeuristicJudge().judge_many([request])
    assert judgment.answer is None and judgment.na_reason == "pipeline_failure"  # our judge's limit, not the system's
    assert judgment.error == "judge limit: the offline judge cannot see images: template 'mmdr/no_such_visual_template'"
    assert judgment.provenance.judge_id.startswith("heuristic")


def test_a_measuring_handler_answers_a_visual_request_from_its_variables():
    def measured(variables):
        return ClaimVerdict(verdict="supported", reason=f"sharpness {variables['sharpness']}"), {}

    judge = HeuristicJudge(handlers={"claim_verdict": measured})
    [judgment] = judge.judge_many([JudgmentRequest("claim_verdict", {"sharpness": 512.0}, ClaimVerdict,
                                                   images=(image("a.png", RED),))])
    assert judgment.answer.reason == "sharpness 512.0" and judgment.na_reason is None


def test_a_vision_model_change_makes_report_judgments_due(tmp_path):
    from dreval_assets.config import Settings

    plain = Settings(tmp_path, judge="openai", judge_model="text-model")
    seeing = Settings(tmp_path, judge="openai", judge_model="text-model", judge_vision_model="vision-model")
    assert plain.shaping_version("report_judgments") != seeing.shaping_version("report_judgments")
    offline = Settings(tmp_path, judge_vision_model="vision-model")  # the offline judge calls no model
    assert offline.shaping_version("report_judgments") == Settings(tmp_path).shaping_version("report_judgments")
