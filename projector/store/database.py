"""The SQLAlchemy connection pool of the read side (`show`, `list`, the demo and the bench),
from the plain `postgresql://` URLs of the public contract. The projector's hot path does not
use it: its store runs on an asyncpg pool of its own (`projector.store.postgres`)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from interlock.contracts.urls import sqlalchemy_url


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def database_pool(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """A SQLAlchemy `AsyncEngine` on asyncpg; JSONB values are plain JSON-safe dicts.
    `dispose()` it when done."""
    return create_async_engine(
        sqlalchemy_url(url),
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=False,
        json_serializer=_dumps,
    )
