"""Settings from the environment (see README, Configuration)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

JUDGES = ("heuristic", "openai")
FETCHERS = ("sandbox", "live")


class ConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Settings:
    home: Path
    judge: str = "heuristic"
    fetch: str = "sandbox"
    judge_batch_size: int = 8  # claims citing one source verified per judge call (1 = per claim)
    refetch_failed: bool = False  # set by `dreval run --refetch-failed`, not by the environment

    @classmethod
    def from_env(cls, home: str | Path | None = None) -> "Settings":
        settings = cls(
            home=Path(home or os.environ.get("DREVAL_HOME") or ".dreval").resolve(),
            judge=os.environ.get("DREVAL_JUDGE", "heuristic"),
            fetch=os.environ.get("DREVAL_FETCH", "sandbox"),
            judge_batch_size=env_int("DREVAL_JUDGE_BATCH_SIZE", 8, minimum=1),
        )
        settings.validate()
        return settings

    def validate(self) -> None:
        if self.judge not in JUDGES:
            raise ConfigError(f"DREVAL_JUDGE={self.judge!r}: choose one of {', '.join(JUDGES)}")
        if self.fetch not in FETCHERS:
            raise ConfigError(f"DREVAL_FETCH={self.fetch!r}: choose one of {', '.join(FETCHERS)}")

    @property
    def db_path(self) -> Path:
        return self.home / "dreval.duckdb"

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"



def env_int(name: str, default: int | None, minimum: int | None = None) -> int | None:
    """An integer setting from the environment; a malformed value is an error, not a default."""
    value = os.environ.get(name, "")
    if value == "":
        return default
    try:
        number = int(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a whole number") from exc
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name}={value!r}: expected a whole number >= {minimum}")
    return number


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "")
    if value == "":
        return default
    try:
        return float(value)
    except ValueError as exc:
        raise ConfigError(f"{name}={value!r} is not a number") from exc
