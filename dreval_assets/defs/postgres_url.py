"""The PostgreSQL URL of the home's Dagster instance (teams: DREVAL_DAGSTER_POSTGRES_URL), read without
importing dagster-postgres (~0.3 s): a home on SQLite never needs it.

People write the URL the way PostgreSQL documents it (`postgresql://user:pass@host:5432/db`, or
Heroku's `postgres://`). SQLAlchemy 2.1 reads a bare `postgresql://` as the psycopg 3 driver, which
is not installed (dagster-postgres needs psycopg2): the URL is given the locked driver here, when
the instance loads it from the environment, so neither `dreval` nor `dagster dev` sees the bare form.
"""
from __future__ import annotations

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
