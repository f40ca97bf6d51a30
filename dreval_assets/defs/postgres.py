"""The home's Dagster instance on PostgreSQL: dagster-postgres's storage, opened with the URL's driver made
explicit (`postgres_url.with_locked_driver`). Loaded by Dagster only when the instance names it."""
from __future__ import annotations

from dagster_postgres import DagsterPostgresStorage
from dagster_postgres.utils import pg_url_from_config

from .postgres_url import with_locked_driver


class PostgresStorage(DagsterPostgresStorage):
    """dagster-postgres's storage, opened with the URL's driver made explicit."""

    @classmethod
    def from_config_value(cls, inst_data, config_value):  # noqa: D102 - Dagster's loader
        config = {**config_value, "postgres_url": with_locked_driver(pg_url_from_config(config_value))}
        config.pop("postgres_db", None)
        return super().from_config_value(inst_data, config)
