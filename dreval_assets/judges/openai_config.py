"""Configuration of the OpenAI-compatible judge, from the environment. The key never leaves here."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..environment import env_float, env_int
from ..errors import ConfigError
from ..home import MODES  # noqa: F401 (the judge's modes, named here too)
from .answer_budget import overrides_from_env

# DREVAL_JUDGE_WORKER=auto: the calls' client work in a process of its own from this concurrency (below it,
# that work is small beside the endpoint's time and a second process would only add its start)
AUTO_WORKER_FROM = 16
# DREVAL_JUDGE_WORKERS=auto: one worker process per this many slots of DREVAL_JUDGE_CONCURRENCY, at most one
# per core (a worker's client work, ~2.4 ms of CPU a request on the machine of bench/bench_judge_cpu.py's
# figures, fills its core at ~400 requests a second: ~120 slots of a 0.3 s endpoint)
SLOTS_PER_WORKER = 64
WORKER_MAIN = "dreval_assets.judges.openai_calls:worker_main"  # the worker's body, named: imports nothing
DEFAULT_TEMPERATURE = 0.0  # a request whose benchmark names no temperature, and a system writing its report


@dataclass(frozen=True)
class Price:
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_mtok + tokens_out * self.output_per_mtok) / 1_000_000


@dataclass(frozen=True)
class OpenAIJudgeConfig:
    model: str
    base_url: str | None = None
    api_key: str = field(default="", repr=False)
    mode: str = "tools"
    concurrency: int = 8
    # DREVAL_JUDGE_TEMPERATURE: when set, every request is sent at it (the user's override); None: each
    # request's own (its benchmark's published temperature), else DEFAULT_TEMPERATURE
    temperature: float | None = None
    seed: int | None = 0
    timeout_s: float = 120.0  # one HTTP request
    deadline_s: float = 600.0  # one judgment: every attempt, re-ask and wait between them together
    max_attempts: int = 6  # HTTP attempts of our single retry layer
    validation_retries: int = 1  # instructor re-asks after an invalid answer (bounded, counted)
    backoff_base_s: float = 1.0
    backoff_cap_s: float = 60.0
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    source_tokens: int = 3_000  # source passages per prompt (BM25-selected for the claims asked about)
    vision_model: str | None = None  # the model for requests that show images (None: `model`)
    embedding_model: str | None = None  # the endpoint's model for /v1/embeddings (None: no embeddings)
    max_tokens: dict[str, int] = field(default_factory=dict)  # answer budgets by template (answer_budget.py)
    # answers and ledger rows are written at most this often: a killed run loses at most this long's answers
    write_interval_s: float = 1.0
    # the calls' HTTP side in a worker process (judges/judge_worker.py): on, off, or auto (from concurrency 16)
    worker: str = "auto"
    workers: int | None = None  # how many worker processes share the endpoint's limits (None: auto)

    @property
    def uses_worker(self) -> bool:
        return self.worker == "on" or (self.worker == "auto" and self.concurrency >= AUTO_WORKER_FROM)

    @property
    def worker_processes(self) -> int:
        """How many worker processes send this endpoint's calls: the setting, else one per
        SLOTS_PER_WORKER slots, at most one per core; never more than the concurrency or the requests per
        minute, so every worker's share of them is at least 1."""
        wanted = self.workers or min(-(-self.concurrency // SLOTS_PER_WORKER), usable_cores())
        return max(1, min(wanted, self.concurrency, self.requests_per_minute or wanted))

    def worker_shares(self) -> list["OpenAIJudgeConfig"]:
        """Each worker's settings: its share of the concurrency and of the rate limits (they sum to the
        endpoint's), everything else the same."""
        n = self.worker_processes
        return [replace(self, concurrency=_share(self.concurrency, n, i),
                        requests_per_minute=self.requests_per_minute and _share(self.requests_per_minute, n, i),
                        tokens_per_minute=self.tokens_per_minute and _share(self.tokens_per_minute, n, i))
                for i in range(n)]

    def temperature_for(self, requested: float | None) -> float:
        """The temperature sent: the user's override, else the request's (its benchmark's), else 0."""
        if self.temperature is not None:
            return self.temperature
        return DEFAULT_TEMPERATURE if requested is None else requested

    def model_for(self, visual: bool) -> str:
        """The model a request is sent to: the vision model for a visual request when one is set."""
        return (self.vision_model or self.model) if visual else self.model

    def __post_init__(self) -> None:
        if not self.model:
            raise ConfigError("DREVAL_JUDGE=openai needs DREVAL_JUDGE_MODEL (the model name to call)")
        if self.mode not in MODES:
            raise ConfigError(f"DREVAL_JUDGE_MODE={self.mode!r}: choose one of {', '.join(MODES)}")
        if self.concurrency < 1 or self.max_attempts < 1 or self.validation_retries < 0:
            raise ConfigError("judge concurrency and attempts must be >= 1, validation retries >= 0")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ConfigError(f"DREVAL_JUDGE_TEMPERATURE={self.temperature}: choose a value from 0 to 2")
        if self.timeout_s <= 0 or self.deadline_s <= 0:
            raise ConfigError("DREVAL_JUDGE_TIMEOUT and DREVAL_JUDGE_DEADLINE must be > 0 seconds")
        if self.worker not in ("auto", "on", "off"):
            raise ConfigError(f"DREVAL_JUDGE_WORKER={self.worker!r}: choose auto, on or off")
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"DREVAL_JUDGE_WORKERS={self.workers}: choose auto or a number from 1")
        if not 0 <= self.write_interval_s <= 60:
            raise ConfigError(f"DREVAL_JUDGE_WRITE_S={self.write_interval_s:g}: choose 0 to 60 seconds")

    @classmethod
    def from_env(cls, home: Path | None = None, model: str | None = None) -> "OpenAIJudgeConfig":
        """The judge's settings; `model` overrides DREVAL_JUDGE_MODEL (a system's writer). The model,
        base URL, mode and vision and embedding models are the home's judge's (home.py) wherever the
        environment sets none."""
        from ..home import DEFAULT_MODE, JudgeChoice, resolve_judge

        env = os.environ
        judge = resolve_judge(home).choice if home is not None else JudgeChoice(
            model=env.get("DREVAL_JUDGE_MODEL", ""), base_url=env.get("OPENAI_BASE_URL", ""),
            mode=env.get("DREVAL_JUDGE_MODE", ""), vision_model=env.get("DREVAL_JUDGE_VISION_MODEL", ""),
            embedding_model=env.get("DREVAL_JUDGE_EMBEDDING_MODEL", ""))
        return cls(
            model=model or judge.model,
            base_url=judge.base_url or None,
            api_key=env.get("OPENAI_API_KEY", ""),
            mode=judge.mode or DEFAULT_MODE,
            concurrency=env_int("DREVAL_JUDGE_CONCURRENCY", 8),
            temperature=env_float("DREVAL_JUDGE_TEMPERATURE", None),
            seed=env_int("DREVAL_JUDGE_SEED", 0),
            timeout_s=env_float("DREVAL_JUDGE_TIMEOUT", 120.0),
            deadline_s=env_float("DREVAL_JUDGE_DEADLINE", 600.0),
            max_attempts=env_int("DREVAL_JUDGE_MAX_ATTEMPTS", 6),
            validation_retries=env_int("DREVAL_JUDGE_VALIDATION_RETRIES", 1),
            backoff_base_s=env_float("DREVAL_JUDGE_BACKOFF", 1.0),
            requests_per_minute=env_int("DREVAL_JUDGE_RPM", None),
            tokens_per_minute=env_int("DREVAL_JUDGE_TPM", None),
            prices=load_prices(env.get("DREVAL_JUDGE_PRICES"), home),
            source_tokens=env_int("DREVAL_JUDGE_SOURCE_TOKENS", 3_000, minimum=100),
            vision_model=judge.vision_model or None,
            embedding_model=judge.embedding_model or None,
            max_tokens=overrides_from_env(),
            write_interval_s=env_float("DREVAL_JUDGE_WRITE_S", 1.0),
            worker=env.get("DREVAL_JUDGE_WORKER", "").strip().lower() or "auto",
            workers=_workers_setting(env.get("DREVAL_JUDGE_WORKERS", "")),
        )


def usable_cores() -> int:
    """The cores this process may run on (its affinity, which a container's CPU set narrows)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


def _share(total: int, n: int, index: int) -> int:
    """The `index`-th of `n` near-equal parts of `total` that sum to it."""
    return total // n + (index < total % n)


def _workers_setting(text: str) -> int | None:
    text = text.strip().lower()
    if text in ("", "auto"):
        return None
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"DREVAL_JUDGE_WORKERS={text!r}: choose auto or a number from 1") from None


def load_prices(setting: str | None, home: Path | None) -> dict[str, Price]:
    """Prices per million tokens: DREVAL_JUDGE_PRICES (a JSON file path or inline JSON), else
    `<home>/judge_prices.json`. Format: {"model": {"input_per_mtok": 0.15, "output_per_mtok": 0.6}}."""
    text = None
    if setting:
        text = Path(setting).read_text() if not setting.lstrip().startswith("{") else setting
    elif home is not None and (home / "judge_prices.json").is_file():
        text = (home / "judge_prices.json").read_text()
    if not text:
        return {}
    try:
        table = json.loads(text)
        return {model: Price(float(p["input_per_mtok"]), float(p["output_per_mtok"])) for model, p in table.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"judge price table is malformed ({exc}); expected "
                          '{"model": {"input_per_mtok": x, "output_per_mtok": y}}') from exc

