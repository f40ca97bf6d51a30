"""A run at full benchmark size: N tasks x M systems against a loopback judge with a fixed latency.

    python bench/bench_scale.py --tasks 10 --systems 10 --latency 0.3 --concurrency 8 32 64

Generates a synthetic benchmark in our generic layout from the bundled demo (its eight tasks in the six
benchmarks' styles, repeated with their own queries and numbers; every report lengthened to about
`--words` words by repeating its sections with other numbers, so figures, traces, checklists, sandbox
pages and attachments feed every benchmark's metrics; `--pages` extra sandbox pages per task), imports
it into a fresh home and runs `dreval run` in a child process against `tests/loopback_llm.py` answering
after `--latency` seconds. Per concurrency it prints: wall time, the lower bound (judge requests x
latency / concurrency: the endpoint as the only limit), their ratio, judge calls per report, the child's
peak RSS (and the peak of its processes' summed RSS: its judge workers and plot helper too), the storage (working DuckDB file, Dagster history), and where the wall beyond the bound went:
when the first request arrived, how long after the last answer the command ended, and how busy the
endpoint's slots were in between. With `--add-system` it then adds one
more system and runs again (wall, ratio, DuckDB growth), then a no-op run.

The stand-in computes its answers on these cores (~15 s of CPU at 10 x 10), which a real endpoint never
takes from the run it answers. With `--answers-first` a first, unmeasured run on a home of its own has
every answer computed, and each measured run is answered from the stand-in's memory, still after the
latency: what is measured is then the command against the endpoint alone.
"""
from __future__ import annotations

import argparse
import compileall
import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from judge_answers import dreval_answer  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402

DEMO = ROOT / "dreval_assets" / "demo"
REFERENCE_START = re.compile(r"^(#+\s*(references|sources|bibliography)\b|references:)", re.I)
# a number of two or more digits that is not a citation marker, an anchor, a URL or a file name
NUMBER = re.compile(r"(?<![\[\w/#.\-])(\d{2,})(?![\]\w])")
REMEMBERED_ANSWERS = 8192  # distinct request bodies whose answers the stand-in keeps (a run's repeats are close)
ALL_ANSWERS = 10**7  # --answers-first: every answer kept (~1 KB each: ~40 MB at 100 x 10)
# the `dreval` command's own entry point (argv from sys.argv, as the installed script has it)
CLI = "from dreval_assets.entry import console; console()"


def shifted(text: str, offset: int) -> str:
    """The text with every number moved by `offset` (0: unchanged), so a copy asks the judge anew."""
    return NUMBER.sub(lambda m: str(int(m.group(1)) + offset), text) if offset else text


def lengthened(report: str, words: int, variant: int) -> str:
    """The report's body repeated, each copy with other numbers, until about `words` words; the
    reference list stays at the end, so every copy's markers resolve."""
    lines = report.splitlines()
    end = next((i for i, line in enumerate(lines) if REFERENCE_START.match(line.strip())), len(lines))
    title, body, references = lines[:1], "\n".join(lines[1:end]), "\n".join(lines[end:])
    copies, n = [shifted(body, variant)], len(report.split())
    while n < words and body.strip():
        copies.append(shifted(body, variant + 97 * len(copies)))
        n += len(body.split())
    return "\n".join([*title, *copies, references]) + "\n"


def demo_systems() -> list[Path]:
    return [p for parent in ("systems", "extra_systems") for p in sorted((DEMO / parent).iterdir()) if p.is_dir()]


def generate(root: Path, n_tasks: int, n_systems: int, words: int, extra_pages: int) -> tuple[Path, str]:
    """The benchmark under `root` (systems/ holds `n_systems`, extra/ one more); returns the extra's folder."""
    for folder in ("attachments", "images", "references"):
        shutil.copytree(DEMO / folder, root / folder)
    base_tasks = [json.loads(line) for line in (DEMO / "tasks.jsonl").read_text().splitlines() if line.strip()]
    pages = [json.loads(line) for line in (DEMO / "sandbox.jsonl").read_text().splitlines() if line.strip()]
    sentences = [s for p in pages for s in re.split(r"(?<=\.)\s+", p["text"]) if len(s) > 40]
    tasks, sandbox = [], []
    for i in range(n_tasks):
        base = base_tasks[i % len(base_tasks)]
        copy = i // len(base_tasks)
        task = dict(base, id=f"{base['id']}-s{i}")
        task["query"] = shifted(base["query"], copy) + (f" (Edition {copy}.)" if copy else "")
        tasks.append((base["id"], copy, task))
        for page in pages:
            if page["task_id"] == base["id"]:
                sandbox.append(dict(page, task_id=task["id"]))
        for k in range(extra_pages):  # noise pages: other tasks' sentences, so a search has pages to read
            text = " ".join(shifted(sentences[(i * 31 + k * 7 + j) % len(sentences)], k + 1) for j in range(12))
            sandbox.append({"task_id": task["id"], "url": f"https://noise-{k}.example/t{i}/page", "title": f"Noise {k}",
                            "role": "noise", "text": text})
    (root / "tasks.jsonl").write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for _, _, t in tasks))
    (root / "sandbox.jsonl").write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in sandbox))
    bases = demo_systems()
    for s in range(n_systems + 1):
        base = bases[s % len(bases)]
        folder = root / ("systems" if s < n_systems else "extra") / f"system-{s:03d}"
        shutil.copytree(base / "images", folder / "images")
        for base_id, copy, task in tasks:
            variant = (s // len(bases)) * 13 + copy * 5
            report = base / f"{base_id}.md"
            (folder / f"{task['id']}.md").write_text(lengthened(report.read_text(), words, variant))
            trace = base / f"{base_id}.trace.json"
            if trace.exists():
                (folder / f"{task['id']}.trace.json").write_text(shifted(trace.read_text(), variant))
    return root / "extra" / f"system-{n_systems:03d}", f"system-{n_systems:03d}"


def dreval(home: Path, env: dict[str, str], *argv: str) -> tuple[float, int, float, int]:
    """Wall seconds, peak RSS (KiB), CPU seconds and the peak of its processes' summed RSS (KiB: the
    command's, its judge workers', its plot helper's) of one `dreval` command in a child process."""
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CLI, "--home", str(home), *argv], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0, 0]
    watcher = threading.Thread(target=_watch_peak, args=(child.pid, peak), daemon=True)
    watcher.start()
    _, status, usage = os.wait4(child.pid, 0)
    watcher.join()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"dreval {' '.join(argv)} failed: {child.stderr.read().decode()[-3000:]}")
    return time.perf_counter() - started, peak[0], usage.ru_utime + usage.ru_stime, peak[1]


def _watch_peak(pid: int, peak: list[int]) -> None:
    """The child's own peak RSS (VmHWM, KiB) and the largest sum of its and its descendants' RSS seen,
    read until it ends. Not wait4's ru_maxrss: Linux keeps in it the RSS the child had before its exec,
    and a child of this process (which holds every request the stand-in answered) starts as large as it."""
    while True:
        found = _status(pid, "VmHWM:")
        if found is None:  # gone, or a zombie: it has ended
            return
        peak[0] = max(peak[0], found)
        peak[1] = max(peak[1], sum(_status(p, "VmRSS:") or 0 for p in _family(pid)))
        time.sleep(0.05)


def _status(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            found = next((line for line in status if line.startswith(field)), None)
    except OSError:
        return None
    return int(found.split()[1]) if found else None


def _family(pid: int) -> list[int]:
    """The process and its descendants."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    family, grown = {pid}, True
    while grown:
        more = {child for child, parent in parents.items() if parent in family} - family
        family |= more
        grown = bool(more)
    return sorted(family)


def size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def judge_env(llm: LoopbackLLM, concurrency: int) -> dict[str, str]:
    env = dict(os.environ, DREVAL_JUDGE="openai", DREVAL_JUDGE_MODEL="loopback-model", OPENAI_BASE_URL=llm.base_url,
               OPENAI_API_KEY="bench", DREVAL_JUDGE_CONCURRENCY=str(concurrency), DREVAL_JUDGE_CONTEXT="131072")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def measured_run(llm: LoopbackLLM, home: Path, env: dict[str, str], concurrency: int, latency: float,
                 reports: int, *argv: str, answers_known: bool = False) -> dict:
    calls_before, remembered_before = llm.n_calls, llm.answers_remembered
    if not answers_known:
        llm.forget_answers()  # each run's repeated requests alike, whatever ran before
    llm.spans.clear()
    started = time.monotonic()
    wall, rss_kib, cpu, family_kib = dreval(home, env, "run", *argv)
    calls = llm.n_calls - calls_before
    lower = calls * latency / concurrency
    return {"wall": wall, "cpu": cpu, "calls": calls, "lower": lower, "ratio": wall / lower if lower else float("nan"),
            **endpoint_use(llm.spans, started, wall, concurrency),
            "calls_per_report": calls / reports, "rss_mib": rss_kib / 1024, "family_mib": family_kib / 1024,
            "remembered": llm.answers_remembered - remembered_before,
            "duckdb_mb": size_mb(home / "dreval.duckdb"), "dagster_mb": size_mb(home / "dagster")}


def endpoint_use(spans: list[tuple[float, float]], started: float, wall: float, concurrency: int) -> dict:
    """When the first request arrived and the last answer left (seconds into the command), and the share
    of the endpoint's `concurrency` slots busy in between."""
    if not spans:
        return {"first": float("nan"), "last": float("nan"), "after": float("nan"), "busy": float("nan")}
    first, last = min(a for a, _ in spans) - started, max(b for _, b in spans) - started
    busy = sum(b - a for a, b in spans) / (concurrency * (last - first)) if last > first else float("nan")
    return {"first": first, "last": last, "after": wall - last, "busy": busy}


def show(label: str, r: dict) -> None:
    print(f"{label}: wall {r['wall']:.1f} s for {r['calls']:,} judge requests; lower bound {r['lower']:.1f} s "
          f"-> {r['ratio']:.2f}x; CPU {r['cpu']:.1f} s; {r['calls_per_report']:.1f} calls per report "
          f"({r['remembered']:,} answered from the stand-in's memory); "
          f"peak RSS {r['rss_mib']:,.0f} MiB (with its worker and helper processes {r['family_mib']:,.0f} MiB); "
          f"DuckDB {r['duckdb_mb']:.1f} MB, Dagster history {r['dagster_mb']:.1f} MB", flush=True)
    print(f"  first request at {r['first']:.1f} s, last answer at {r['last']:.1f} s, the command ended "
          f"{r['after']:.1f} s after it; endpoint slots busy {r['busy']:.0%} in between", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--words", type=int, default=0,
                        help="lengthen each report to about this many words (0: as the demo's, ~420)")
    parser.add_argument("--pages", type=int, default=15, help="extra noise pages per task (the demo has 5)")
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the judge takes to answer")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8])
    parser.add_argument("--add-system", action="store_true", help="then add one system and run again, then a no-op")
    parser.add_argument("--answers-first", action="store_true",
                        help="compute the stand-in's answers in a first, unmeasured run; measured runs are answered "
                             "from memory (after the latency all the same)")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores", flush=True)
    # compiled once, as an installed package is, or as a first run leaves it (unless PYTHONDONTWRITEBYTECODE):
    # otherwise every measured process compiles our modules anew (~0.3 s of each run's start)
    compileall.compile_dir(ROOT / "dreval_assets", quiet=1)
    reports = args.tasks * args.systems
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "bench"
        extra, extra_name = generate(root, args.tasks, args.systems, args.words, args.pages)
        words = sum(len(p.read_text().split()) for p in (root / "systems").rglob("*.md")) / reports
        print(f"{args.tasks} tasks x {args.systems} systems = {reports} reports of ~{words:,.0f} words; "
              f"judge answers after {args.latency * 1000:.0f} ms", flush=True)
        # the stand-in answers on threads of this process: what the bench made so far is set aside, so the
        # collections its answers' garbage sets off do not walk it while every handler thread waits
        gc.freeze()
        try:
            measure(args, Path(tmp), root, reports, extra, extra_name)
        finally:
            gc.unfreeze()  # the interpreter's last collection frees them (duckdb's bindings check it does)


def measure(args: argparse.Namespace, tmp: Path, root: Path, reports: int, extra: Path, extra_name: str) -> None:
    """Each concurrency's run on a fresh home against one stand-in; then, if asked, one system more."""
    # answers cost the stand-in CPU of these cores, which a real endpoint never takes: a repeated request
    # (TVIR's three judge runs repeat their prompts) is answered from memory, still after the latency
    remembered = ALL_ANSWERS if args.answers_first else REMEMBERED_ANSWERS
    with LoopbackLLM(answer=dreval_answer, latency_s=args.latency, keep_requests=False,
                     remember_answers=remembered, record_spans=True) as llm:
        if args.answers_first:
            compute_answers(llm, tmp / "home-answers", root, max(args.concurrency))
        for concurrency in args.concurrency:
            home = tmp / f"home-{concurrency}"
            env = judge_env(llm, concurrency)
            dreval(home, env, "import", "generic", str(root))
            show(f"concurrency {concurrency}", measured_run(llm, home, env, concurrency, args.latency, reports,
                                                            answers_known=args.answers_first))
        if args.add_system:
            before = size_mb(home / "dreval.duckdb")
            dreval(home, env, "add-system", extra_name, "--reports", str(extra))
            # the lower bound at the last concurrency measured
            added = measured_run(llm, home, env, concurrency, args.latency, args.tasks, "--system", extra_name,
                                 answers_known=args.answers_first)  # the new system's answers computed as asked
            show(f"add one system ({args.tasks} partitions)", added)
            print(f"  DuckDB file grew {before:.1f} -> {added['duckdb_mb']:.1f} MB "
                  f"({(added['duckdb_mb'] / before - 1) * 100:+.0f} %) for {100 / args.systems:.0f} % more data")
            noop, *_ = dreval(home, env, "run")
            print(f"no-op run: {noop:.2f} s", flush=True)


def compute_answers(llm: LoopbackLLM, home: Path, root: Path, concurrency: int) -> None:
    """Every answer of a run computed and kept by the stand-in: one unmeasured run on a home of its own."""
    started = time.perf_counter()
    env = judge_env(llm, concurrency)
    dreval(home, env, "import", "generic", str(root))
    dreval(home, env, "run")
    print(f"answers computed in a first run: {llm.n_calls:,} requests in {time.perf_counter() - started:.1f} s",
          flush=True)
    shutil.rmtree(home)


if __name__ == "__main__":
    main()
