"""Errors every layer may raise, and how their messages are shown, kept apart so that no layer
imports another just to name one."""
from __future__ import annotations


class ConfigError(ValueError):
    """A setting or a name the user gave (environment, policy, suite) is not valid."""


def first_line(value: object, limit: int | None = None) -> str:
    """An error's first line (its type's name when it says nothing), cut at `limit` characters."""
    text = str(value).strip()
    line = text.splitlines()[0] if text else type(value).__name__
    return line if limit is None else line[:limit]


def redact(text: str, secret: str | None) -> str:
    """`text` with `secret` (an API key) masked; keys too short to be real are left alone."""
    return text.replace(secret, "***") if secret and len(secret) >= 4 else text
