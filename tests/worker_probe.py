"""A judge worker's body that imports almost nothing of ours (tests/test_judge_worker.py): what it has
loaded is then what the worker loaded by itself, not what unpickling a test module's call pulled in."""
from __future__ import annotations

import sys
from dataclasses import dataclass

from dreval_assets.judges.judge_worker import serve


@dataclass
class Request:
    variables: dict
    images: tuple = ()


@dataclass
class Call:
    """The shape `JudgeWorker.call` sends (it drops the request's variables and images)."""
    request: Request


def loaded_modules_main(conn, names):
    """A worker whose every call answers which of `names` its process has loaded."""
    async def loaded(_prepared):
        return [name for name in names if name in sys.modules]

    serve(conn, lambda: loaded)
