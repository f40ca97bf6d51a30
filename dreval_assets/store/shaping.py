"""The settings behind each settings version: what a partition was made under, by name, so the planner
can say which setting changed and whether it shapes that partition at all (`operations/planner.py`)."""
from __future__ import annotations

import json
from typing import Iterable

from ..config import SHAPING_SETTINGS, Settings
from .db import Store


def remember_shaping(store: Store, settings: Settings) -> None:
    """Record the current settings under their versions (once per distinct version)."""
    rows = {settings.shaping_version(asset): json.dumps(values, sort_keys=True)
            for asset in SHAPING_SETTINGS if (values := settings.shaping_values(asset)) is not None}
    known = {v for v, _ in store.rows_for_keys(
        "SELECT version, settings FROM shaping_settings WHERE version IN (SELECT unnest(?))", rows)}
    new = [(version, text) for version, text in rows.items() if version not in known]
    if new:
        store.write(lambda con: con.executemany(
            "INSERT INTO shaping_settings VALUES (?, ?, now()) ON CONFLICT DO NOTHING", new))


def shaping_settings(store: Store, versions: Iterable[str]) -> dict[str, dict]:
    """version -> the settings it hashes, for the versions recorded (a version made before they were
    recorded, or by a process that did not record it, is missing)."""
    return {version: json.loads(text) for version, text in store.rows_for_keys(
        "SELECT version, settings FROM shaping_settings WHERE version IN (SELECT unnest(?))",
        (v for v in versions if v))}
