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

    @classmethod
    def from_env(cls, home: str | Path | None = None) -> "Settings":
        settings = cls(
            home=Path(home or os.environ.get("DREVAL_HOME") or ".dreval").resolve(),
            judge=os.environ.get("DREVAL_JUDGE", "heuristic"),
            fetch=os.environ.get("DREVAL_FETCH", "sandbox"),
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
