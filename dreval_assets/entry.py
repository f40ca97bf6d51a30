"""The `dreval` console script. The command's modules load with the cyclic collector paused: they make
~300k objects that all live as long as the process, and the passes the collector made over them while
they loaded were ~0.2 s of every command's start. Then they are set aside (frozen) and `cli.console`
runs the command with the collector on."""
from __future__ import annotations

import gc
import os
import sys
from typing import Callable, Sequence


def console() -> None:
    loaded_command(sys.argv[1:])()


def loaded_command(args: Sequence[str] = ()) -> Callable[[], None]:
    """`cli.console`, imported uncollected; the collector is on again when it returns. For `dreval run`
    with an endpoint judge whose calls go through a worker process, that process starts first."""
    gc.disable()
    try:
        if "run" in args and "--dry-run" not in args:
            _start_the_judge_worker()
        from .cli import console as command
    finally:
        gc.freeze()
        gc.enable()
    return command


def _start_the_judge_worker() -> None:
    """For `dreval run` with the endpoint judge, its calls through a worker (the environment's settings):
    the judge worker's process starts before the command loads its own modules (`judge_worker.start_early`),
    so its ~1 s of imports run on the other core while the command's do. A judge named only by the home's
    settings, or settings the command will refuse, start it when the plan is made, as before. (The parse
    helper started here too took that core from the worker: the judge check left 0.2-0.7 s later.)"""
    if os.environ.get("DREVAL_JUDGE", "").strip().lower() != "openai":
        return
    from .errors import ConfigError
    from .judges.openai_config import WORKER_MAIN, OpenAIJudgeConfig

    try:
        wanted = OpenAIJudgeConfig.from_env(model="any").uses_worker  # the model may be the home's: not asked
    except ConfigError:
        return
    if wanted:
        from .judges.judge_worker import start_early

        start_early(WORKER_MAIN)
