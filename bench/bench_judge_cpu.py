"""CPU one judge request costs the process that sends it (the judge worker's share of a run).

    python bench/bench_judge_cpu.py [--calls 2000] [--concurrency 64] [--latency 0.02] [--profile out.prof]

A loopback stand-in in its own process (so its CPU is not counted) answers every request with a batch of
eight claim verdicts; this process sends `--calls` prepared requests of ~6,000 characters through the
same code the judge worker runs (`openai_calls.EndpointCalls` on `endpoint_of`'s clients) and prints its
CPU time per request. `--profile` writes a cProfile of the sends.
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from dreval_assets.core.models import ClaimVerdictBatch  # noqa: E402
from dreval_assets.judges.base import JudgmentRequest  # noqa: E402
from dreval_assets.judges.judge_call import PreparedCall  # noqa: E402
from dreval_assets.judges.openai_calls import EndpointCalls, endpoint_of  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig  # noqa: E402

STAND_IN = """
import sys, time
sys.path[:0] = [sys.argv[1]]
from loopback_llm import LoopbackLLM
answer = {"verdicts": [{"claim_id": f"c{i}", "verdict": "supported", "evidence": "The ferry carried 41,200.",
                        "reason": "The page states the figure."} for i in range(8)]}
with LoopbackLLM(answer=lambda request, schema: answer, latency_s=float(sys.argv[2]), keep_requests=False) as llm:
    print(llm.base_url, flush=True)
    sys.stdin.read()
"""
PAGE = ("The Lowmarsh ferry carried 41,200 passengers in 2023, up from 36,900 in 2022. The operator, "
        "Estuary Links, added a third vessel named Curlew in March 2023. ") * 30


def prepared(i: int) -> PreparedCall:
    claims = "\n".join(f"- [c{k}] The ferry carried {40_000 + i + k} passengers in 2023." for k in range(8))
    text = f"Check each claim against the source.\n<<<CLAIMS\n{claims}\nCLAIMS>>>\n<<<SOURCE\n{PAGE}\nSOURCE>>>"
    request = JudgmentRequest("claim_verdict_batch", {"i": i}, ClaimVerdictBatch)
    messages = [{"role": "system", "content": "You are a careful fact checker."}, {"role": "user", "content": text}]
    return PreparedCall(request, messages, "bench", f"key-{i}", len(text), "loopback-model", 1024, 0.0)


async def send_all(config: OpenAIJudgeConfig, calls: list[PreparedCall]) -> int:
    endpoint, caller = endpoint_of(config), EndpointCalls(config)
    outcomes = await asyncio.gather(*(caller.call(p, endpoint.client(), endpoint.semaphore, endpoint.limiter)
                                      for p in calls))
    return sum(o.answer is not None for o in outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--profile", help="write a cProfile of the sends to this file")
    args = parser.parse_args()
    stand_in = subprocess.Popen([sys.executable, "-c", STAND_IN, str(ROOT / "tests"), str(args.latency)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        base_url = stand_in.stdout.readline().strip()
        config = OpenAIJudgeConfig(model="loopback-model", base_url=base_url, api_key="bench",
                                   concurrency=args.concurrency, worker="off")
        asyncio.run(send_all(config, [prepared(-1 - i) for i in range(args.concurrency)]))  # warm: imports, schemas
        calls = [prepared(i) for i in range(args.calls)]
        profile = cProfile.Profile() if args.profile else None
        cpu, wall = time.process_time(), time.perf_counter()
        if profile:
            profile.enable()
        ok = asyncio.run(send_all(config, calls))
        if profile:
            profile.disable()
            profile.dump_stats(args.profile)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        print(f"{ok:,} of {args.calls:,} answered at concurrency {args.concurrency} ({args.latency * 1000:.0f} ms "
              f"stand-in): {cpu / args.calls * 1000:.2f} ms of CPU per request, {args.calls / wall:.0f} requests/s, "
              f"wall {wall:.1f} s")
    finally:
        stand_in.stdin.close()
        stand_in.wait(10)


if __name__ == "__main__":
    main()
