"""Before a command or component starts its work: are its broker and database there? Each is
tried for a bounded time, so an unreachable server is one clear failure (exit 2 through the
CLI's error path) rather than a component retrying forever with a trace on every attempt."""

from __future__ import annotations

import asyncio

import asyncpg
import nats
import nats.errors

from interlock.app.errors import ServerUnreachable
from interlock.config.access import redacted, without_credentials
from interlock.contracts.urls import asyncpg_dsn, nats_servers

CONNECT_DEADLINE = 8.0
"""Seconds a server has to answer at start-up (a broker or database restarting is back well
within it; one that is not running will not be)."""


async def require_reachable(
    nats_url: str, database_url: str | None, *, within: float = CONNECT_DEADLINE
) -> None:
    """Raise `ServerUnreachable` naming the server (never its password) and the variable that
    points at it, unless both accept a connection within `within` seconds."""
    await _nats(nats_url, within)
    if database_url is not None:
        await _postgres(database_url, within)


async def require_database(database_url: str, *, within: float = CONNECT_DEADLINE) -> None:
    """The same for a command that needs the database only."""
    await _postgres(database_url, within)


async def _nats(url: str, within: float) -> None:
    async def quiet(_error: Exception) -> None:
        """The failure is reported once, below; nats-py would log every attempt."""

    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            # nats-py keeps retrying a refused first connection whatever its options say:
            # the deadline is ours to keep.
            nc = await asyncio.wait_for(
                nats.connect(
                    nats_servers(url),
                    connect_timeout=2,
                    allow_reconnect=False,
                    max_reconnect_attempts=0,
                    error_cb=quiet,
                ),
                timeout=max(0.5, deadline - asyncio.get_running_loop().time()),
            )
        except Exception as exc:
            if asyncio.get_running_loop().time() >= deadline or _refused_credentials(exc):
                raise ServerUnreachable(
                    f"NATS at {without_credentials(url)} {_why(exc, within)}",
                    hint="start it (or `interlock up`), or point INTERLOCK_NATS_URL at it",
                ) from exc
            await asyncio.sleep(0.5)
        else:
            await nc.close()
            return


async def _postgres(url: str, within: float) -> None:
    """One connection straight through asyncpg: the check needs no pool and no SQLAlchemy."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        remaining = deadline - asyncio.get_running_loop().time()
        try:
            async with asyncio.timeout(max(0.5, remaining)):
                connection = await asyncpg.connect(asyncpg_dsn(url))
        except Exception as exc:
            if asyncio.get_running_loop().time() >= deadline or _final(exc):
                raise ServerUnreachable(
                    f"PostgreSQL at {redacted(url)} {_why(exc, within)}",
                    hint="start it, or point INTERLOCK_DATABASE_URL at it "
                    "(`interlock migrate` creates the schema and roles)",
                ) from exc
            await asyncio.sleep(0.5)
        else:
            await connection.close()
            return


def _refused_credentials(exc: Exception) -> bool:
    """An authentication refusal will not change by trying again."""
    if isinstance(exc, nats.errors.AuthorizationError):
        return True
    return _sqlstate(exc).startswith(INVALID_AUTHORIZATION)


def _final(exc: Exception) -> bool:
    """A database's refusal that will not change by trying again: the credentials, or a
    database the server does not have."""
    return _refused_credentials(exc) or _sqlstate(exc) == NO_SUCH_DATABASE


INVALID_AUTHORIZATION = "28"
"""PostgreSQL's SQLSTATE class for refused credentials."""
NO_SUCH_DATABASE = "3D000"
"""PostgreSQL's SQLSTATE for a database name the server does not know."""


def _sqlstate(exc: Exception) -> str:
    """PostgreSQL's SQLSTATE of the driver's error, or of one it wraps ("" for any other error)."""
    cause: BaseException | None = exc
    for _ in range(5):  # the driver's error is a link or two down
        if cause is None:
            break
        state = str(getattr(cause, "sqlstate", "") or "")
        if state:
            return state
        cause = cause.__cause__ or getattr(cause, "orig", None)
    return ""


def _why(exc: Exception, within: float) -> str:
    if _refused_credentials(exc):
        return "refused the credentials"
    if _sqlstate(exc) == NO_SUCH_DATABASE:
        return "answers, but that database does not exist (create it, then `interlock migrate`)"
    return f"is unreachable (no connection within {within:g}s: {type(exc).__name__})"
