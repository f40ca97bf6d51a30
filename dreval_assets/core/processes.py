"""Whether a process still runs, by its PID (stdlib only): run markers and leftover temporary files."""
from __future__ import annotations

import os


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
