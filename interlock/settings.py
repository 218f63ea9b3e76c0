"""Process settings, read from ``INTERLOCK_*`` environment variables."""

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from contracts.urls import NATS_SCHEMES, asyncpg_dsn, bad_url, scheme, split_postgres_url

__all__ = ["Settings", "asyncpg_dsn"]


class Settings(BaseSettings):
    """Where Interlock finds its broker and its database."""

    # URLs may carry passwords: keep input values out of validation errors.
    model_config = SettingsConfigDict(env_prefix="INTERLOCK_", hide_input_in_errors=True)

    nats_url: str | None = Field(
        default=None,
        description="NATS server as nats://host:port; when unset the embedded nats-server is used.",
    )
    database_url: str | None = Field(
        default=None,
        description=(
            "PostgreSQL as postgresql://user@host:port/db (the form every Postgres tool prints); "
            "when unset the embedded PostgreSQL is used."
        ),
    )
    home: Path = Field(
        default=Path(".interlock"),
        description="Directory where the embedded stack keeps its data, logs and stack.json.",
    )

    @field_validator("nats_url")
    @classmethod
    def _check_nats_url(cls, url: str | None) -> str | None:
        if url is not None and scheme(url) not in NATS_SCHEMES:
            raise bad_url("INTERLOCK_NATS_URL", "nats://host:port", url)
        return url

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, url: str | None) -> str | None:
        if url is not None:
            split_postgres_url(url, setting="INTERLOCK_DATABASE_URL")
        return url
