"""Which home a command works on (found the way git finds its repository), and the judge the home
was scored with (remembered in the home, never its key). Dagster-free and DuckDB-free: read by
`Settings.from_env` on every command."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Mapping

from .errors import ConfigError, redact_url

HOME_FOLDER = ".dreval"
DATABASE = "dreval.duckdb"
JUDGE_FILE = "judge.json"


@dataclass(frozen=True)
class FoundHome:
    path: Path
    how: str  # how it was found: "--home", "DREVAL_HOME", "found above ...", "new"

    @property
    def exists(self) -> bool:
        """A home is a folder holding the pipeline's database (`dreval init` makes an empty one)."""
        return (self.path / DATABASE).is_file()


def find_home(flag: str | Path | None = None, env: Mapping[str, str] | None = None,
              cwd: Path | None = None) -> FoundHome:
    """`--home`, else DREVAL_HOME, else the nearest `.dreval` folder in the current directory or one
    above it; else a new `.dreval` in the current directory (which only the commands that may create
    a home create)."""
    env = os.environ if env is None else env
    if flag:
        return FoundHome(Path(flag).expanduser().resolve(), "--home")
    if env.get("DREVAL_HOME"):
        return FoundHome(Path(env["DREVAL_HOME"]).expanduser().resolve(), "DREVAL_HOME")
    here = Path(cwd or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / HOME_FOLDER).is_dir():
            return FoundHome(folder / HOME_FOLDER, "found here" if folder == here else "found above the current directory")
    return FoundHome(here / HOME_FOLDER, "new")


# The judge's identity as the environment names it: what a home remembers.
JUDGE_VARIABLES = {"kind": "DREVAL_JUDGE", "model": "DREVAL_JUDGE_MODEL", "base_url": "OPENAI_BASE_URL",
                   "mode": "DREVAL_JUDGE_MODE", "vision_model": "DREVAL_JUDGE_VISION_MODEL",
                   "embedding_model": "DREVAL_JUDGE_EMBEDDING_MODEL"}
DEFAULT_MODE = "tools"
MODES = ("tools", "json", "json_schema", "md_json")  # instructor's modes a judge may be asked in


@dataclass(frozen=True)
class JudgeChoice:
    """A judge as a home remembers it. The key is never part of it (read from the environment when
    the judge is built)."""
    kind: str = "heuristic"
    model: str = ""
    base_url: str = ""
    mode: str = ""  # '' = DEFAULT_MODE
    vision_model: str = ""
    embedding_model: str = ""

    def identity(self) -> tuple:
        """What makes two choices the same judge: the kind, and for an endpoint everything that says
        which model answers and how it is asked."""
        if self.kind != "openai":
            return (self.kind,)
        return (self.kind, self.model, self.base_url.rstrip("/"), self.mode or DEFAULT_MODE, self.vision_model,
                self.embedding_model)

    def describe(self) -> str:
        """One line, the base URL's credentials masked."""
        if self.kind != "openai":
            return self.kind
        where = redact_url(self.base_url) if self.base_url else "the OpenAI API"
        extras = [f"mode {self.mode or DEFAULT_MODE}"]
        extras += [f"vision {self.vision_model}"] if self.vision_model else []
        extras += [f"embeddings {self.embedding_model}"] if self.embedding_model else []
        return f"openai {self.model or '(no model)'} at {where} ({', '.join(extras)})"

    def switch_command(self) -> str:
        """The `dreval judge set` line that chooses this judge."""
        if self.kind != "openai":
            return f"dreval judge set {self.kind}"
        flags = [f"--model {self.model}"] if self.model else []
        flags += [f"--base-url {redact_url(self.base_url)}"] if self.base_url else []
        flags += [f"--mode {self.mode}"] if self.mode and self.mode != DEFAULT_MODE else []
        flags += [f"--vision-model {self.vision_model}"] if self.vision_model else []
        flags += [f"--embedding-model {self.embedding_model}"] if self.embedding_model else []
        return " ".join(["dreval judge set openai", *flags])


def environment_judge(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The judge fields the environment sets (non-empty variables only)."""
    env = os.environ if env is None else env
    return {name: env[variable] for name, variable in JUDGE_VARIABLES.items() if env.get(variable)}


def recorded_judge(home: Path) -> JudgeChoice | None:
    """The judge the home was scored with, or None (a new home, or one from before homes remembered it)."""
    path = home / JUDGE_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        known = {f.name for f in fields(JudgeChoice)}
        return JudgeChoice(**{k: str(v) for k, v in data.items() if k in known})
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path} is not a judge record ({exc}); set it again with `dreval judge set ...`") from exc


def record_judge(home: Path, choice: JudgeChoice) -> None:
    """Remember `choice` as the home's judge (written beside and renamed over; the owner's only)."""
    home.mkdir(parents=True, exist_ok=True)
    target = home / JUDGE_FILE
    temporary = home / f".{JUDGE_FILE}.{os.getpid()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump({k: v for k, v in asdict(choice).items() if v}, out, indent=2)
        out.write("\n")
    os.replace(temporary, target)


@dataclass(frozen=True)
class ResolvedJudge:
    choice: JudgeChoice  # the judge a command uses
    recorded: JudgeChoice | None  # the home's, when it remembers one
    conflict: str = ""  # why the environment's judge is not the home's ('' when it is, or none is recorded)


def resolve_judge(home: Path, env: Mapping[str, str] | None = None) -> ResolvedJudge:
    """The home's judge, with whatever the environment sets over it; a conflict when the environment
    names a different judge than the one the home was scored with (switching is `dreval judge set`)."""
    named = environment_judge(env)
    recorded = recorded_judge(home)
    if recorded is None:
        return ResolvedJudge(JudgeChoice(**named), None)
    wanted = replace(recorded, **named)
    if wanted.identity() == recorded.identity():
        return ResolvedJudge(wanted, recorded)
    differing = [JUDGE_VARIABLES[f.name] for f in fields(JudgeChoice) if f.name in named
                 and getattr(wanted, f.name) != getattr(recorded, f.name)]
    conflict = (f"this home was scored with the judge {recorded.describe()}, but the environment names "
                f"{wanted.describe()} ({', '.join(differing)}): unset those variables to use the home's judge, or "
                f"switch with `{wanted.switch_command()}` (each judge's scores are kept apart)")
    return ResolvedJudge(wanted, recorded, conflict)
