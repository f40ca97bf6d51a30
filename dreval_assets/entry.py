"""The `dreval` console script. The command's modules load with the cyclic collector paused: they make
~300k objects that all live as long as the process, and the passes the collector made over them while
they loaded were ~0.2 s of every command's start. Then they are set aside (frozen) and `cli.console`
runs the command with the collector on."""
from __future__ import annotations

import gc
from typing import Callable


def console() -> None:
    loaded_command()()


def loaded_command() -> Callable[[], None]:
    """`cli.console`, imported uncollected; the collector is on again when it returns."""
    gc.disable()
    try:
        from .cli import console as command
    finally:
        gc.freeze()
        gc.enable()
    return command
