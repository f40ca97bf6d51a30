"""Where the published copy lies and who holds the working database: named by the store's lock
messages (`db`) and used by the publish (`publish`), so neither imports the other."""
from __future__ import annotations

import re
from pathlib import Path

PUBLISHED_NAME = "results.duckdb"
_PID_RE = re.compile(r"\(PID (\d+)\)")


def published_path(db_path: Path) -> Path:
    return db_path.with_name(PUBLISHED_NAME)


def lock_holder(message: str) -> int | None:
    """The PID DuckDB names in a lock conflict, if it names one."""
    found = _PID_RE.search(message)
    return int(found.group(1)) if found else None
