"""The URL forms of the public contract: `postgresql://user@host:port/db` and
`nats://host:port` (several, comma-separated, for the seed servers of a NATS cluster). The
database driver is chosen internally, never by the user."""

from __future__ import annotations

from urllib.parse import unquote

from interlock.contracts.subjects import inbox_prefix

_POSTGRES_SCHEMES = ("postgresql", "postgres")
NATS_SCHEMES = ("nats", "tls", "ws", "wss")


def sqlalchemy_url(url: str) -> str:
    """Return `url` with the asyncpg driver SQLAlchemy needs, keeping an explicit `+driver`."""
    driver, rest = split_postgres_url(url, setting="database URL")
    return f"postgresql+{driver or 'asyncpg'}://{rest}"


def asyncpg_dsn(url: str) -> str:
    """Return the plain `postgresql://` form of `url`, without any `+driver`."""
    _, rest = split_postgres_url(url, setting="database URL")
    return f"postgresql://{rest}"


def nats_servers(url: str) -> list[str]:
    """The servers of a NATS URL: one `nats://host:port`, or the comma-separated seed URLs of
    a cluster (the client library is given them as its server list)."""
    return [part.strip() for part in url.split(",") if part.strip()]


def nats_user(url: str) -> str | None:
    """The user a `nats://user:password@host:port` URL connects as (None: anonymous); of
    several seed URLs, the first's (each carries the same credentials)."""
    first = (nats_servers(url) or [""])[0]
    userinfo, at, _ = first.partition("://")[2].partition("/")[0].rpartition("@")
    return unquote(userinfo.partition(":")[0]) if at and userinfo else None


def nats_inbox(url: str) -> str:
    """The inbox prefix a connection to `url` must use: its user's own (see
    `subjects.inbox_prefix`), or the client library's default for an anonymous one."""
    user = nats_user(url)
    return inbox_prefix(user) if user else "_INBOX"


def scheme(url: str) -> str:
    return url.partition("://")[0].lower() if "://" in url else ""


def split_postgres_url(url: str, *, setting: str) -> tuple[str | None, str]:
    """Split `url` into its driver (`None` when absent) and what follows `://`."""
    base, _, driver = scheme(url).partition("+")
    if base not in _POSTGRES_SCHEMES:
        raise bad_url(setting, "postgresql://user@host:port/db", url)
    return driver or None, url.partition("://")[2]


def bad_url(setting: str, form: str, url: str) -> ValueError:
    # Only the scheme is echoed: the rest of the URL may carry a password.
    found = f"{scheme(url)}://…" if scheme(url) else "no scheme"
    return ValueError(f"{setting} must look like {form}, got {found}")
