"""Stage functions: frames in, frames out, one per asset. Dagster-free, so tests call them directly."""
