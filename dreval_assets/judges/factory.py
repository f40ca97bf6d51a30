"""Pick the judge named by configuration."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from ..config import ConfigError
from ..errors import redact_url
from ..store.db import Store
from ..store.judge_calls import JudgeCallStore
from .base import Judge
from .heuristic import HeuristicJudge


WORKER_START_S = 60.0  # the worker's start (spawn and imports, ~1 s here) before it can ask, on a slow machine


def make_judge(kind: str, store: Store | None = None, home: Path | None = None) -> Judge:
    if kind == "heuristic":
        return HeuristicJudge()
    if kind == "openai":
        from .openai_config import OpenAIJudgeConfig
        from .openai_judge import OpenAIJudge

        return OpenAIJudge(OpenAIJudgeConfig.from_env(home), JudgeCallStore(store) if store else None)
    raise ConfigError(f"unknown judge {kind!r}")


def check_judge(kind: str, store: Store | None = None, home: Path | None = None) -> str:
    """Before a run: the configured judge can answer (its settings are complete and, for an
    endpoint, one cheap request succeeds). Raises ConfigError or PreflightFailed with one line;
    returns what it found (model, context window, mode), '' for the offline judge."""
    if kind != "openai":
        return ""
    from .context_window import known_window
    from .openai_config import OpenAIJudgeConfig
    from .preflight import check_judge_endpoint

    config = OpenAIJudgeConfig.from_env(home)
    ask = None
    if config.uses_worker:  # its process starts first and asks: the run's process never loads the client
        from .openai_judge import OpenAIJudge

        ask = partial(_asked_by, OpenAIJudge(config)._endpoint().worker, config)
    try:
        check_judge_endpoint(config, JudgeCallStore(store) if store else None, ask=ask)
    except BaseException:
        from .judge_loop import JUDGE_LOOP

        JUDGE_LOOP.close_workers()  # nothing will run
        raise
    window = known_window(config.base_url, config.model, config.api_key)  # the run's judges are told the same
    context = f"context {window.tokens} tokens ({window.source})" if window.tokens else f"context {window.source}"
    where = redact_url(config.base_url) if config.base_url else "the OpenAI API"
    return f"judge {config.model} at {where}: {context}; mode {config.mode}"


def _asked_by(worker: Any, config: Any) -> Any:
    """The check's request, sent by the judge worker; a worker that ends or never answers fails the check."""
    from .judge_worker import WorkerEnded
    from .preflight import ATTEMPTS, TIMEOUT_S, PreflightFailed

    wait_s = WORKER_START_S + ATTEMPTS * (min(config.timeout_s, TIMEOUT_S) + ATTEMPTS)  # its tries and pauses
    try:
        return worker.check(wait_s)
    except TimeoutError:
        raise PreflightFailed(f"the judge worker process did not answer the judge check within {wait_s:g} s "
                              "(DREVAL_JUDGE_WORKER=off sends the calls from the run's own process)") from None
    except WorkerEnded as exc:
        raise PreflightFailed(f"{exc} (DREVAL_JUDGE_WORKER=off sends the calls from the run's own process)") from None


def make_writer(entry, store: Store | None = None, home: Path | None = None) -> Judge:
    """The client an endpoint system writes its reports with: the judge's limits and retry settings,
    the system's endpoint and model, its key from the environment variable it names."""
    import dataclasses
    import os

    from .openai_config import OpenAIJudgeConfig
    from .openai_judge import OpenAIJudge

    config = dataclasses.replace(OpenAIJudgeConfig.from_env(home, model=entry.model), base_url=entry.endpoint,
                                 api_key=os.environ.get(entry.api_key_env or "OPENAI_API_KEY", ""))
    return OpenAIJudge(config, JudgeCallStore(store) if store else None)
