"""Judge calls stream: the first requests are answered while later ones are still being prepared, and
batches asked at once from several threads share the endpoint's one concurrency limit."""
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).parent))

from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import DelayFault, LoopbackLLM  # noqa: E402
from test_openai_judge import claim_request, make_judge  # noqa: E402

from dreval_assets.judges import openai_judge  # noqa: E402
from dreval_assets.judges.parallel import as_done, each  # noqa: E402


def test_the_first_requests_are_answered_while_the_rest_are_prepared(llm, calls, monkeypatch):
    judge = make_judge(llm, calls)
    prepare = judge._prepare
    seen_at_last: list[int] = []

    def slow_to_prepare(request):
        if request.variables["claim"].endswith("99."):  # the last request: wait for answers to earlier ones
            deadline = time.monotonic() + 5
            while llm.n_calls == 0 and time.monotonic() < deadline:
                time.sleep(0.01)
            seen_at_last.append(llm.n_calls)
        return prepare(request)

    monkeypatch.setattr(judge, "_prepare", slow_to_prepare)
    requests = [claim_request(f"The ferry carried {40_000 + i} passengers in 20{i:02d}.") for i in range(100)]
    judgments = judge.judge_many(requests)
    assert all(j.answer is not None for j in judgments) and llm.n_calls == 100
    assert seen_at_last and seen_at_last[0] > 0  # requests had been sent before the last was prepared


class CountingLLM(LoopbackLLM):
    """Counts chat requests being answered at once."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.now = self.peak = 0
        self.guard = threading.Lock()

    def _sleep(self, seconds):
        with self.guard:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            super()._sleep(seconds)
        finally:
            with self.guard:
                self.now -= 1


def test_batches_asked_at_once_share_the_endpoints_concurrency(calls):
    with CountingLLM(answer=dreval_answer, latency_s=0.05) as llm:
        judges = [make_judge(llm, calls, concurrency=3) for _ in range(4)]  # four steps' judges, one endpoint
        pieces = [lambda j=j, k=k: j.judge_many([claim_request(f"Claim {k}-{i}: 41,200 passengers in 2023.")
                                                  for i in range(12)]) for k, j in enumerate(judges)]
        started = time.monotonic()
        results = each(judges[0], pieces)
        elapsed = time.monotonic() - started
    assert [len(r) for r in results] == [12] * 4 and all(j.answer is not None for r in results for j in r)
    assert llm.n_calls == 48
    assert llm.peak == 3  # the pieces ran together, never more than the endpoint's limit in flight
    assert elapsed >= 48 / 3 * 0.05 * 0.9


def test_pieces_are_handed_back_as_they_end_and_each_keeps_their_order():
    """The judge step writes one asset while the other still waits on the judge (`as_done`); `each`
    gives results in the pieces' order whichever ends first."""
    judge = SimpleNamespace(parallel_batches=True)
    slow_may_end = threading.Event()

    def slow():
        assert slow_may_end.wait(10)
        return "slow"

    done = as_done(judge, [slow, lambda: "fast"])
    assert next(done) == (1, "fast")  # while the slow piece still runs
    slow_may_end.set()
    assert next(done) == (0, "slow")
    assert list(done) == []
    assert each(judge, [lambda: time.sleep(0.05) or "first", lambda: "second"]) == ["first", "second"]
    assert list(as_done(SimpleNamespace(parallel_batches=False), [lambda: 1, lambda: 2])) == [(0, 1), (1, 2)]


def test_the_writer_has_every_answer_when_judge_many_returns(llm, calls):
    judge = make_judge(llm, calls)
    judge.judge_many([claim_request(f"The ferry carried {40_000 + i} passengers in 2023.") for i in range(40)])
    assert calls.store.query("SELECT count(*) FROM judge_cache").item() == 40
    assert calls.store.query("SELECT count(*) FROM judge_ledger").item() == 40
    assert openai_judge.PREPARE_CHUNK < 40  # more than one chunk was streamed


def test_metric_scores_same_statement_questions_are_asked_ahead_and_found_in_the_cache(llm, calls):
    """The judge step asks them (they need the parsed claims only); metric_scores' own questions are then
    the same requests, answered from the call cache with no request to the endpoint."""
    import polars as pl

    from dreval_assets.benchmarks.evidence import ClaimEvidence, ReportEvidence
    from dreval_assets.benchmarks.registry import judge_for_tasks
    from dreval_assets.stages.frames import frame
    from dreval_assets.stages.scores import _mark_duplicates, ask_same_statements_ahead

    url = ("https://ferries.example/a",)
    texts = {"c1": ("sentence", "The Lowmarsh ferry carried 41,200 passengers in 2023 on the estuary crossing.", url),
             "c2": ("sentence", "In 2023 the Lowmarsh ferry carried 41,200 passengers across the wide estuary daily.", url),
             "c3": ("uncited", "In 2023 the Lowmarsh estuary ferry carried 41,200 passengers across.", ()),
             "c4": ("figure_caption", "Lowmarsh ferry: 41,200 passengers in 2023 on the estuary crossing.", url)}
    claims = frame("report_claims", [{"system": "s", "task": "t", "claim_id": cid, "kind": kind, "text": text,
                                      "urls": list(urls), "unresolved_indices": [], "citation_indices": [1] if urls else [],
                                      "section": "", "source_claim": None, "extraction": "sentences"}
                                     for cid, (kind, text, urls) in texts.items()])
    tasks = pl.DataFrame({"task": ["t"], "benchmark": ["tvir"]})
    ask_same_statements_ahead(claims, tasks, make_judge(llm, calls))
    asked = [r for r in llm.requests if "statement_a" in str(r) or "STATEMENT" in str(r.get("messages"))]
    assert llm.n_calls == 1 and len(asked) == 1  # one ambiguous pair of facts: c1 and c2 (c3 uncited, c4 no fact)
    evidence = {("s", "t"): ReportEvidence("s", "t", "tvir", "j", claims=[
        ClaimEvidence(cid, kind, text, urls) for cid, (kind, text, urls) in texts.items()])}
    _mark_duplicates(evidence, judge_for_tasks(make_judge(llm, calls), tasks.iter_rows(named=True)))
    assert llm.n_calls == 1  # metric_scores' question was the same request: a cache hit
    import json
    same = json.loads(calls.store.query("SELECT answer FROM judge_cache WHERE template = 'same_statement'").item())["same"]
    assert evidence[("s", "t")].duplicate_of == ({"c2": "c1"} if same else {})  # as the cached answer says
    assert calls.store.query("SELECT count(*) FROM judge_ledger WHERE template = 'same_statement' AND cache_hit").item() == 1


def test_asked_ahead_holds_a_thread_past_the_limit_until_answers_make_room():
    from dreval_assets.judges.judge_loop import AskedAhead

    ahead = AskedAhead(limit=4, chunk=2)
    ahead.take(8)  # nothing asked yet: a first chunk larger than the limit still goes
    ahead.give(8)
    ahead.take(3)
    passed = threading.Event()
    waiting = threading.Thread(target=lambda: (ahead.take(2), passed.set()))
    waiting.start()
    assert not passed.wait(0.2)  # 3 + 2 > 4: it waits for answers
    ahead.give(1)
    assert passed.wait(5) and ahead.asked == 4
    waiting.join(5)


def test_each_answer_makes_room_before_its_chunk_ends(calls, monkeypatch):
    """A chunk whose one request is slow gives back the room of those answered at once: held until its
    slowest answer, the endpoint's room stayed full while most of its slots were idle."""
    monkeypatch.setattr(openai_judge, "PREPARE_CHUNK", 4)
    with LoopbackLLM(answer=dreval_answer, latency_s=0.01) as llm:
        llm.fail_next(DelayFault(3.0))  # whichever request arrives first is slow
        judge = make_judge(llm, calls, concurrency=4)
        ahead = judge._asked_ahead()
        judged: list = []
        asking = threading.Thread(target=lambda: judged.extend(judge.judge_many(
            [claim_request(f"Claim {i}: 41,200 passengers in 2023.") for i in range(4)])))
        asking.start()
        deadline = time.monotonic() + 2.5
        while ahead.asked != 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        assert ahead.asked == 1 and asking.is_alive()  # three answered while the fourth waits: room for three
        asking.join(10)
        assert ahead.asked == 0 and len(judged) == 4 and all(j.answer is not None for j in judged)


def test_a_held_chunk_gives_back_each_request_once():
    from dreval_assets.judges.judge_loop import AskedAhead

    ahead = AskedAhead(limit=8, chunk=4)
    held = ahead.take(4)
    held.one()
    held.one()
    held.rest()  # the chunk ended: the two not given back one by one
    held.one()  # a late call's end after the chunk's: nothing more
    held.rest()
    assert ahead.asked == 0


def test_threads_preparing_at_once_never_ask_more_than_the_endpoints_limit_ahead(calls, monkeypatch):
    """Six batches asked at once from six threads: together they never hold more than the endpoint's
    ask-ahead limit (each waits, its interpreter lock released, for answers to make room), every answer
    comes back, and what they asked is all given back, an interrupted batch's too."""
    monkeypatch.setattr(openai_judge, "PREPARE_CHUNK", 4)
    peak = []
    with CountingLLM(answer=dreval_answer, latency_s=0.02) as llm:
        judges = [make_judge(llm, calls, concurrency=2) for _ in range(6)]
        ahead = judges[0]._asked_ahead()
        assert ahead.limit == 2 * 2 + 2 * 4 and all(j._asked_ahead() is ahead for j in judges)
        take = ahead.take
        monkeypatch.setattr(ahead, "take", lambda n: (take(n), peak.append(ahead.asked))[0])
        pieces = [lambda j=j, k=k: j.judge_many([claim_request(f"Claim {k}-{i}: 41,200 passengers in 2023.")
                                                  for i in range(16)]) for k, j in enumerate(judges)]
        results = each(judges[0], pieces)
        assert [len(r) for r in results] == [16] * 6 and all(j.answer is not None for r in results for j in r)
        assert max(peak) <= ahead.limit and len(peak) == 6 * 4 and llm.peak == 2
        assert ahead.asked == 0

        stream = judges[1].judge_each(claim_request(f"Stopped {i}: 41,200 passengers.") for i in range(40))
        next(stream)
        stream.close()  # the caller stops early: its chunks are cancelled
        deadline = time.monotonic() + 5
        while ahead.asked and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ahead.asked == 0


def test_each_judgment_is_handed_back_as_its_request_is_answered_and_a_stream_can_ask_now(calls):
    """`judge_each` hands a request's judgment back before the slowest of its chunk is answered (here the
    chunk's last answer waits for the first judgment to be taken, at most 10 s), and a stream that says
    `ASK_NOW` has what it made so far sent without filling a chunk."""
    from dreval_assets.judges.base import ASK_NOW

    first_taken, order = threading.Event(), []

    def answer(request, schema):
        if "in 2099" in str(request.get("messages")):
            first_taken.wait(10)
            order.append("the last answer")
        return dreval_answer(request, schema)

    with LoopbackLLM(answer=answer) as llm:
        judge = make_judge(llm, calls)
        requests = [claim_request("The ferry carried 40,000 passengers in 2001."),
                    claim_request("The ferry carried 40,001 passengers in 2099.")]
        for n, judgment in enumerate(judge.judge_each(iter(requests))):
            assert judgment.answer is not None
            order.append(f"judgment {n}")
            first_taken.set()
        assert order == ["judgment 0", "the last answer", "judgment 1"]

        sent_before_the_stream_went_on = []

        def stream():
            yield claim_request("The ferry carried 40,002 passengers in 2002.")
            yield ASK_NOW
            deadline = time.monotonic() + 10
            while llm.n_calls < 3 and time.monotonic() < deadline:  # the one made is sent, not held
                time.sleep(0.01)
            sent_before_the_stream_went_on.append(llm.n_calls)
            yield claim_request("The ferry carried 40,003 passengers in 2003.")

        assert len(judge.judge_many(stream())) == 2 and sent_before_the_stream_went_on == [3]
