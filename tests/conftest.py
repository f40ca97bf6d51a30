import os
from pathlib import Path

import pytest

from judge_answers import dreval_answer
from loopback_llm import LoopbackLLM
from loopback_web import LoopbackWeb

from dreval_assets.judges.context_window import forget_known_windows
from dreval_assets.store.db import Store
from dreval_assets.store.judge_calls import JudgeCallStore

# Never let a developer's environment leak into tests.
for name in ("DREVAL_HOME", "DREVAL_JUDGE", "DREVAL_FETCH", "DAGSTER_HOME"):
    os.environ.pop(name, None)


@pytest.fixture(autouse=True)
def fresh_context_windows():
    """What a judge was told of its model's context is kept for the process: each test's servers anew."""
    yield
    forget_known_windows()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def llm():
    """Our chat-completions server answering as the deterministic stand-in model."""
    with LoopbackLLM(answer=dreval_answer) as server:
        yield server


@pytest.fixture
def calls(tmp_path):
    """A judge call store on a fresh DuckDB file."""
    store = Store(tmp_path / "judge.duckdb")
    store.ensure_schema()
    return JudgeCallStore(store)


@pytest.fixture
def web():
    """A loopback HTTP server for the test (modules that need routes or a wider scope define their own)."""
    with LoopbackWeb() as server:
        yield server
