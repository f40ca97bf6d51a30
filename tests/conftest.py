import os
from pathlib import Path

import pytest

# Never let a developer's environment leak into tests.
for name in ("DREVAL_HOME", "DREVAL_JUDGE", "DREVAL_FETCH", "DAGSTER_HOME"):
    os.environ.pop(name, None)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"
