"""Dagster definitions: everything Dagster-specific lives in this package."""
import warnings

from dagster import BetaWarning

# Single-run backfills and multi-to-single partition mappings are what DESIGN.md asks for;
# their beta label is noted there, not repeated on every command.
warnings.filterwarnings("ignore", category=BetaWarning)

from .definitions import build_definitions  # noqa: E402

__all__ = ["build_definitions"]
