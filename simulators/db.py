"""The simulator's edge to PostgreSQL: asyncpg is imported here and where SQL is written.

asyncpg ships no type information, so rows are `Any` until a function of this package
turns them into plain, typed values.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg

from interlock.contracts.urls import asyncpg_dsn

Connection = Any
"""An `asyncpg.Connection` (untyped)."""
Target = str | Connection
"""A database URL (`postgresql://…`) or an open connection."""


@asynccontextmanager
async def connection(target: Target) -> AsyncIterator[Connection]:
    """An open connection: `target` itself, or a new one (closed on exit) for a URL."""
    if not isinstance(target, str):
        yield target
        return
    conn = await asyncpg.connect(asyncpg_dsn(target), timeout=10)
    try:
        yield conn
    finally:
        await conn.close()


async def create_pool(database_url: str, size: int) -> Any:
    """A small pool for the simulator's handlers (each call holds one connection)."""
    return await asyncpg.create_pool(asyncpg_dsn(database_url), min_size=1, max_size=size)
