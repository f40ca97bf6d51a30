"""Errors every layer may raise, kept apart so that no layer imports another just to name one."""
from __future__ import annotations


class ConfigError(ValueError):
    """A setting or a name the user gave (environment, policy, suite) is not valid."""
