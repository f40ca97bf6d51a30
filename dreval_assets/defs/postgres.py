"""The home's Dagster instance on PostgreSQL (teams: DREVAL_DAGSTER_POSTGRES_URL).

People write the URL the way PostgreSQL documents it (`postgresql://user:pass@host:5432/db`, or
Heroku's `postgres://`). SQLAlchemy 2.1 reads a bare `postgresql://` as the psycopg 3 driver, which
is not installed (dagster-postgres needs psycopg2): the URL is given the locked driver here, when
the instance loads it from the environment, so neither `dreval` nor `dagster dev` sees the bare form.
"""
from __future__ import annotations

from dagster_postgres import DagsterPostgresStorage
from dagster_postgres.utils import pg_url_from_config

POSTGRES_URL_ENV = "DREVAL_DAGSTER_POSTGRES_URL"
DRIVER_SCHEME = "postgresql+psycopg2"


class PostgresURLError(ValueError):
    pass


def with_locked_driver(url: str) -> str:
    """The URL SQLAlchemy opens with psycopg2: `postgresql://` and `postgres://` gain the driver;
    `postgresql+psycopg2://` is kept; another driver is refused by name (it is not installed)."""
    scheme, found, rest = url.strip().partition("://")
    if not found:
        raise PostgresURLError(f"{POSTGRES_URL_ENV} is not a URL; expected postgresql://user:password@host:5432/db")
    if scheme.lower() in ("postgres", "postgresql", DRIVER_SCHEME):
        return f"{DRIVER_SCHEME}://{rest}"
    raise PostgresURLError(f"{POSTGRES_URL_ENV} has the scheme {scheme}://; expected postgresql:// (the installed "
                           f"driver is psycopg2)")


class PostgresStorage(DagsterPostgresStorage):
    """dagster-postgres's storage, opened with the URL's driver made explicit."""

    @classmethod
    def from_config_value(cls, inst_data, config_value):  # noqa: D102 - Dagster's loader
        config = {**config_value, "postgres_url": with_locked_driver(pg_url_from_config(config_value))}
        config.pop("postgres_db", None)
        return super().from_config_value(inst_data, config)
