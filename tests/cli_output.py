"""The CLI's output as tests read it: every command first says its home on stderr (one line)."""


def without_home_line(err: str) -> str:
    """stderr without the `dreval: home ...` line every command starts with."""
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith("dreval: home "))
