"""Before a command or component starts its work: are its broker and database there? Each is
tried for a bounded time, so an unreachable server is one clear failure (exit 2 through the
CLI's error path) rather than a component retrying forever with a trace on every attempt."""

from __future__ import annotations

import asyncio

import asyncpg
import nats
import nats.errors

from interlock.access import redacted, without_credentials
from interlock.contracts.errors import ErrorCode, InterlockError
from interlock.settings import asyncpg_dsn

CONNECT_DEADLINE = 8.0
"""Seconds a server has to answer at start-up (a broker or database restarting is back well
within it; one that is not running will not be)."""


class ServerUnreachable(InterlockError):
    """The broker or the database did not accept a connection within the start-up deadline."""

    code = ErrorCode.CONFIGURATION
    retryable = False


async def require_reachable(
    nats_url: str, database_url: str | None, *, within: float = CONNECT_DEADLINE
) -> None:
    """Raise `ServerUnreachable` naming the server (never its password) and the variable that
    points at it, unless both accept a connection within `within` seconds."""
    await _nats(nats_url, within)
    if database_url is not None:
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
                    url,
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
    deadline = asyncio.get_running_loop().time() + within
    while True:
        try:
            connection = await asyncpg.connect(asyncpg_dsn(url), timeout=2)
        except Exception as exc:
            if asyncio.get_running_loop().time() >= deadline or _refused_credentials(exc):
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
    return isinstance(
        exc, asyncpg.InvalidAuthorizationSpecificationError | nats.errors.AuthorizationError
    )


def _why(exc: Exception, within: float) -> str:
    if _refused_credentials(exc):
        return "refused the credentials"
    return f"is unreachable (no connection within {within:g}s: {type(exc).__name__})"
