"""Every command the README shows is one the install provides, and its way of reading the results
without `dreval sql` works as printed."""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import duckdb

README = Path(__file__).resolve().parents[1] / "README.md"
SHELL_BUILTINS = {"cd", ".", "source", "export", "set", "echo"}


def shown_commands() -> list[str]:
    lines = []
    for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        lines += [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]
    return lines


def program(line: str) -> str:
    words = [w for w in line.split() if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]  # VAR=value prefixes
    return words[0]


def test_every_command_the_readme_shows_is_installed():
    installed = Path(sys.executable).parent
    missing = sorted({program(line) for line in shown_commands()
                      if program(line) not in SHELL_BUILTINS and not (installed / program(line)).exists()})
    assert not missing, f"the README shows commands the install does not provide: {missing}"


def test_the_readmes_python_one_liner_reads_the_published_results(tmp_path):
    [line] = [line for line in shown_commands() if program(line) == "python" and "results.duckdb" in line]
    (tmp_path / ".dreval").mkdir()
    with duckdb.connect(str(tmp_path / ".dreval" / "results.duckdb")) as con:
        con.execute("CREATE TABLE leaderboard AS SELECT 'careful-scholar' AS system, 90.7 AS mean")
    args = shlex.split(line)
    args[0] = sys.executable
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "careful-scholar" in done.stdout
