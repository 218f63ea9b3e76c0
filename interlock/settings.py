"""Process settings, read from ``INTERLOCK_*`` environment variables."""

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

_POSTGRES_SCHEMES = ("postgresql", "postgres")
_NATS_SCHEMES = ("nats", "tls", "ws", "wss")


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
        if url is not None and _scheme(url) not in _NATS_SCHEMES:
            raise _bad_url("INTERLOCK_NATS_URL", "nats://host:port", url)
        return url

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, url: str | None) -> str | None:
        if url is not None:
            _split_postgres_url(url, setting="INTERLOCK_DATABASE_URL")
        return url


def sqlalchemy_url(url: str) -> str:
    """Return ``url`` with the asyncpg driver SQLAlchemy needs, keeping an explicit ``+driver``."""
    driver, rest = _split_postgres_url(url, setting="database URL")
    return f"postgresql+{driver or 'asyncpg'}://{rest}"


def asyncpg_dsn(url: str) -> str:
    """Return the plain ``postgresql://`` form of ``url``, without any ``+driver``."""
    _, rest = _split_postgres_url(url, setting="database URL")
    return f"postgresql://{rest}"


def _scheme(url: str) -> str:
    return url.partition("://")[0].lower() if "://" in url else ""


def _split_postgres_url(url: str, *, setting: str) -> tuple[str | None, str]:
    """Split ``url`` into its driver (``None`` when absent) and what follows ``://``."""
    base, _, driver = _scheme(url).partition("+")
    if base not in _POSTGRES_SCHEMES:
        raise _bad_url(setting, "postgresql://user@host:port/db", url)
    return driver or None, url.partition("://")[2]


def _bad_url(setting: str, form: str, url: str) -> ValueError:
    # Only the scheme is echoed: the rest of the URL may carry a password.
    found = f"{_scheme(url)}://…" if _scheme(url) else "no scheme"
    return ValueError(f"{setting} must look like {form}, got {found}")
