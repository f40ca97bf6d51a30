"""Dagster definitions: everything Dagster-specific lives in this package."""
from .definitions import build_definitions

__all__ = ["build_definitions"]
