"""What MMDR FLAE's single-call protocol saves against the paper's three prompts (no network, no key).

    python bench/bench_flae_protocol.py

Runs the bundled demo twice with the OpenAI-compatible judge pointed at the loopback server, once per
`mmdr.flae.protocol` (separate, single_call), and prints the judge calls and tokens (in, out) of the
FLAE templates from each home's `judge_ledger`, and whether both runs gave the same FLAE scores.

Measured on the demo (3 MMDR reports; loopback tokens = characters / 4): separate 9 calls, 4,739
tokens in, 162 out; single_call 3 calls, 2,883 in, 90 out. The report is read once either way
(weights and alpha see the task and the measured observables), so the separate prompts cost two
more calls and about 620 more input tokens per report, whatever the report's length.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402

from dreval_assets.cli import main as dreval  # noqa: E402
from dreval_assets.store.db import Store  # noqa: E402

FLAE_TEMPLATES = ("mmdr/flae_scores", "mmdr/flae_judge_scores", "mmdr/flae_weights", "mmdr/flae_alpha")


def run_demo(home: Path, protocol: str) -> tuple[list[tuple], dict[tuple[str, str, str], float]]:
    with LoopbackLLM(answer=dreval_answer) as llm:
        os.environ.update({"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_MODEL": "loopback-model",
                           "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "loopback",
                           "DREVAL_POLICIES": json.dumps({"mmdr.flae.protocol": protocol})})
        with contextlib.redirect_stdout(io.StringIO()):  # the demo's leaderboards: not what is measured here
            status = dreval(["--home", str(home), "demo"])
        if status != 0:
            raise SystemExit(f"demo failed under {protocol}")
    store = Store(home / "dreval.duckdb")
    listed = ", ".join(f"'{t}'" for t in FLAE_TEMPLATES)
    ledger = store.query(f"SELECT template, count(*), sum(tokens_in), sum(tokens_out) FROM judge_ledger "
                         f"WHERE template IN ({listed}) AND NOT cache_hit GROUP BY template ORDER BY template").rows()
    scores = store.query("SELECT system, task, metric, value FROM metric_scores WHERE suite = 'mmdr' "
                         "AND metric IN ('flae', 'read', 'insh', 'stru')").rows()
    return ledger, {(s, t, m): v for s, t, m, v in scores}


def main() -> None:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for protocol in ("separate", "single_call"):
            results[protocol] = run_demo(Path(tmp) / protocol, protocol)
    for protocol, (ledger, _) in results.items():
        calls, tokens_in, tokens_out = (sum(row[i] for row in ledger) for i in (1, 2, 3))
        print(f"{protocol}: {calls} calls, {tokens_in} tokens in, {tokens_out} tokens out")
        for template, n, t_in, t_out in ledger:
            print(f"    {template}: {n} calls, {t_in} in, {t_out} out")
    same = results["separate"][1] == results["single_call"][1]
    print(f"FLAE scores identical under both protocols (the stand-in model answers the same numbers): {same}")


if __name__ == "__main__":
    main()
