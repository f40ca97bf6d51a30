"""The judge's sampling temperature is each benchmark's published one (MMDR 0.2, TVIR 0, the others 0):
what the OpenAI-compatible judge sends, its cache key, the provenance the rows carry, the user's
override (DREVAL_JUDGE_TEMPERATURE), and which requests the stages stamp with which temperature."""
from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from recording_judge import RecordingJudge  # noqa: E402

from dreval_assets.benchmarks.judging import JudgmentContext  # noqa: E402
from dreval_assets.benchmarks.registry import BENCHMARKS, judge_temperature  # noqa: E402
from dreval_assets.core.models import ClaimVerdict  # noqa: E402
from dreval_assets.errors import ConfigError  # noqa: E402
from dreval_assets.judges.base import JudgmentRequest  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig  # noqa: E402
from dreval_assets.judges.openai_judge import OpenAIJudge  # noqa: E402
from dreval_assets.judges.temperature import with_temperature  # noqa: E402
from dreval_assets.stages.frames import SCHEMAS, frame  # noqa: E402
from dreval_assets.stages.judgments import judge_reports  # noqa: E402
from dreval_assets.stages.verdicts import judge_claims  # noqa: E402

PAGE = "The Lowmarsh ferry carried 41,200 passengers in 2023, up from 36,900 in 2022."
SOURCE = {"source_url": "https://ferries.example/lowmarsh", "source_title": "Lowmarsh", "source_text": PAGE}


def request(temperature=None, task="t") -> JudgmentRequest:
    return JudgmentRequest("claim_verdict", {"claim": "The ferry carried 41,200 passengers in 2023.", **SOURCE},
                           ClaimVerdict, {"task": task}, temperature=temperature)


def judge_at(llm, calls, **config) -> OpenAIJudge:
    return OpenAIJudge(OpenAIJudgeConfig(model="loopback-model", base_url=llm.base_url, api_key="k", timeout_s=5,
                                         **config), calls)


def test_published_temperatures_are_declared_per_benchmark():
    assert judge_temperature("mmdr") == 0.2 and judge_temperature("tvir") == 0.0
    assert {name: b.judge_temperature for name, b in BENCHMARKS.items() if name not in ("mmdr", "tvir")} == {
        name: 0.0 for name in BENCHMARKS if name not in ("mmdr", "tvir")}
    assert judge_temperature("no-such-benchmark") is None


def test_the_request_temperature_is_sent_keyed_and_recorded(llm, calls):
    judge = judge_at(llm, calls)
    default, mmdr = judge.judge_many([request(), request(0.2)])
    assert sorted(r["temperature"] for r in llm.requests) == [0.0, 0.2]  # sent concurrently: any order
    assert default.provenance.temperature == 0.0 and mmdr.provenance.temperature == 0.2
    # the temperature sent is in the cache key: the same prompt at 0.2 is its own answer
    assert default.provenance.cache_key != mmdr.provenance.cache_key
    assert judge.cache_key(request(0.2)) == mmdr.provenance.cache_key
    # and an unchanged request asks nothing again
    judge_at(llm, calls).judge_many([request(0.2)])
    assert llm.n_calls == 2


def test_the_users_setting_overrides_every_benchmark(llm, calls, monkeypatch):
    monkeypatch.setenv("DREVAL_JUDGE_MODEL", "loopback-model")
    monkeypatch.setenv("DREVAL_JUDGE_TEMPERATURE", "0.7")
    config = OpenAIJudgeConfig.from_env()
    assert config.temperature == 0.7 and config.temperature_for(0.2) == 0.7 and config.temperature_for(None) == 0.7
    monkeypatch.delenv("DREVAL_JUDGE_TEMPERATURE")
    assert OpenAIJudgeConfig.from_env().temperature is None
    judge = judge_at(llm, calls, temperature=0.5)
    [answer] = judge.judge_many([request(0.2)])
    assert llm.requests[0]["temperature"] == 0.5 and answer.provenance.temperature == 0.5
    monkeypatch.setenv("DREVAL_JUDGE_TEMPERATURE", "3")
    with pytest.raises(ConfigError, match="DREVAL_JUDGE_TEMPERATURE"):
        OpenAIJudgeConfig.from_env()


def test_the_wrapper_stamps_by_task_and_keeps_an_explicit_temperature():
    recording = RecordingJudge()
    judge = with_temperature(recording, 0.0, by_task={"mmdr.q7": 0.2})
    judge.judge_many([request(task="mmdr.q7"), request(task="tvir.1"), request(0.9, task="mmdr.q7")])
    assert [r.temperature for r in recording.requests] == [0.2, 0.0, 0.9]
    assert judge.judge_id == recording.judge_id and judge.stats is recording.stats
    assert with_temperature(recording) is recording  # nothing to stamp: the judge itself
    assert not hasattr(with_temperature(recording, 0.2), "room_for")  # what the judge cannot do stays so


def test_a_streaming_judge_gets_the_requests_stamped_as_they_are_made():
    """Wrapped, a judge that takes an iterator (`streams_requests`) still gets one, each request stamped
    as it is taken (its first sent before the rest are made); `judge_each` stamps too."""
    taken = []

    class Streaming(RecordingJudge):
        streams_requests = True

        def judge_many(self, requests):
            assert not isinstance(requests, list)
            return super().judge_many(list(requests))

        def judge_each(self, requests):
            for one in requests:
                taken.append(one)
                yield from super().judge_many([one])

    streaming = Streaming()
    judge = with_temperature(streaming, 0.0, by_task={"mmdr.q7": 0.2})
    made = []

    def requests():
        for task in ("mmdr.q7", "tvir.1"):
            made.append(task)
            yield request(task=task)

    judge.judge_many(requests())
    assert [r.temperature for r in streaming.requests] == [0.2, 0.0]
    answers = judge.judge_each(requests())
    next(answers)
    assert made[2:] == ["mmdr.q7"] and [r.temperature for r in taken] == [0.2]  # the second not made yet
    list(answers)
    assert [r.temperature for r in taken] == [0.2, 0.0]


def _task(task, benchmark, **extra):
    return {**{k: None for k in SCHEMAS["tasks"]}, "task": task, "benchmark": benchmark, "query": "Explain it.",
            "modality": "multimodal", **extra}


def _report(system, task, text):
    return {**{k: None for k in SCHEMAS["reports"]}, "system": system, "task": task, "status": "ok", "text": text}


REPORT = ("# Shipments\n\nLumenfield shipped 5,600 robots in the fourth quarter of 2024 [1].\n\n"
          "References:\n[1] https://www.lumenfield.example/results - Results\n")


def test_report_judgments_are_asked_at_their_benchmarks_temperature():
    """MMDR's own judgments (FLAE, VEF, TRACE weights) at 0.2; a TVIR task's rubric calls at 0."""
    recording = RecordingJudge()
    tasks = [_task("mmdr.q7", "mmdr", visual_ground_truth="A chart: 5,600 units in the fourth quarter of 2024."),
             _task("tvir.1", "tvir")]
    keys = [("s", "mmdr.q7"), ("s", "tvir.1")]
    judge_reports(JudgmentContext(keys, frame("reports", [_report(s, t, REPORT) for s, t in keys]),
                                  frame("tasks", tasks), frame("task_rubrics", []), recording))
    by_template = {}
    for r in recording.requests:
        by_template.setdefault(r.template, set()).add(r.temperature)
    mmdr_templates = {t for t in by_template if t.startswith("mmdr/")}
    assert {"mmdr/vef", "mmdr/flae_judge_scores", "mmdr/flae_weights", "mmdr/flae_alpha"} <= mmdr_templates
    assert all(by_template[t] == {0.2} for t in mmdr_templates)
    tvir_templates = {t for t in by_template if t.startswith("tvir/")}
    assert {"tvir/writing_quality", "tvir/analytical_depth"} <= tvir_templates  # its rubrics on its own task
    assert all(by_template[t] == {0.0} for t in tvir_templates)


def test_claim_verdicts_carry_the_temperature_sent(llm, calls):
    claims = frame("report_claims", [
        {**{k: None for k in SCHEMAS["report_claims"]}, "system": "s", "task": task, "claim_id": "c1",
         "kind": "sentence", "text": "The Lowmarsh ferry carried 41,200 passengers in 2023.",
         "urls": [SOURCE["source_url"]], "unresolved_indices": []} for task in ("mmdr.q7", "tvir.1")])
    fetched = frame("fetched_references", [
        {**{k: None for k in SCHEMAS["fetched_references"]}, "system": "s", "task": task, "url": SOURCE["source_url"],
         "status": "ok", "page_hash": "p1", "title": "Lowmarsh"} for task in ("mmdr.q7", "tvir.1")])
    tasks = frame("tasks", [_task("mmdr.q7", "mmdr"), _task("tvir.1", "tvir")])
    rows = judge_claims(claims, fetched, {"p1": PAGE}, judge_at(llm, calls), tasks=tasks)
    temperatures = dict(rows.select("task", "temperature").iter_rows())
    assert temperatures == {"mmdr.q7": 0.2, "tvir.1": 0.0}
    assert sorted(r["temperature"] for r in llm.requests) == [0.0, 0.2]
    assert rows.filter(pl.col("task") == "mmdr.q7")["cache_key"][0] != rows.filter(
        pl.col("task") == "tvir.1")["cache_key"][0]
