"""Database engine construction from the plain `postgresql://` URLs of the public contract."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from interlock.contracts.urls import sqlalchemy_url


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), default=str)


def create_engine(url: str, *, pool_size: int = 10) -> AsyncEngine:
    """An asyncpg-backed engine; JSONB values are plain JSON-safe dicts."""
    return create_async_engine(
        sqlalchemy_url(url),
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=False,
        json_serializer=_dumps,
    )
