"""Apply the schema migrations (Alembic) to a database, from code or the CLI."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import create_async_engine

from interlock.contracts.urls import sqlalchemy_url

MIGRATIONS = Path(__file__).parent / "migrations"
# Serialises concurrent `upgrade` calls (two processes starting at once) on one database.
_LOCK_KEY = 0x1A7E_10CC


def _config(connection: Connection) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def _upgrade(connection: Connection) -> None:
    connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _LOCK_KEY})
    command.upgrade(_config(connection), "head")


async def upgrade_async(database_url: str) -> None:
    """Bring the database at `database_url` (plain postgresql:// URL) to the newest schema."""
    engine = create_async_engine(sqlalchemy_url(database_url))
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_upgrade)
    finally:
        await engine.dispose()


def upgrade(database_url: str) -> None:
    """Synchronous `upgrade_async`, for fixtures and scripts outside an event loop."""
    asyncio.run(upgrade_async(database_url))
