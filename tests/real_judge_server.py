"""llama.cpp's llama-server with a GGUF model on a free loopback port, for tests and benchmarks
(`.ci/real-judge` builds the server and extracts the model into a cache folder)."""
from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import httpx

READY_S = 120


def real_judge_paths() -> tuple[Path, Path] | None:
    """(server, model) from DREVAL_REAL_JUDGE_SERVER / _MODEL, else the cache's `paths.env`; None when
    either is missing."""
    server, model = os.environ.get("DREVAL_REAL_JUDGE_SERVER"), os.environ.get("DREVAL_REAL_JUDGE_MODEL")
    cache = Path(os.environ.get("DREVAL_REAL_JUDGE_CACHE")
                 or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dreval" / "real-judge")
    if not (server and model) and (cache / "paths.env").is_file():
        found = dict(line.split("=", 1) for line in (cache / "paths.env").read_text().split())
        server, model = found.get("DREVAL_REAL_JUDGE_SERVER"), found.get("DREVAL_REAL_JUDGE_MODEL")
    if server and model and Path(server).is_file() and Path(model).is_file():
        return Path(server), Path(model)
    return None


class LlamaServer:
    """`with LlamaServer(server, model, log) as base_url:` a running server (`base_url` ends in /v1),
    `slots` parallel requests of `context` tokens each, stopped on exit."""

    def __init__(self, server: Path, model: Path, log: Path, slots: int = 2, context: int = 8192) -> None:
        self.command = [str(server), "-m", str(model), "--host", "127.0.0.1", "--port", str(_free_port()),
                        "-c", str(context * slots), "-np", str(slots), "-t", str(os.cpu_count() or 2), "--no-webui"]
        self.log = log
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> str:
        base = f"http://127.0.0.1:{self.command[self.command.index('--port') + 1]}"
        with self.log.open("w") as out:
            self.process = subprocess.Popen(self.command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"llama-server exited: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    return f"{base}/v1"
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        self.__exit__()
        raise RuntimeError(f"llama-server not ready in {READY_S} s: {self.log.read_text()[-2000:]}")

    def __exit__(self, *_) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
