"""Database engine construction from the plain `postgresql://` URLs of the public contract."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

_SCHEMES = ("postgresql://", "postgres://")


def sqlalchemy_url(url: str) -> str:
    """`postgresql://u@h:p/db` -> `postgresql+asyncpg://u@h:p/db` (an explicit driver stays)."""
    if url.startswith("postgresql+"):
        return url
    for scheme in _SCHEMES:
        if url.startswith(scheme):
            return "postgresql+asyncpg://" + url[len(scheme) :]
    raise ValueError(
        f"expected a postgresql://user@host:port/db URL, got {url.rsplit('@', maxsplit=1)[-1]!r}"
    )


def plain_url(url: str) -> str:
    """The driver-free form (`postgresql://…`) that asyncpg and psql accept."""
    if url.startswith("postgresql+"):
        return "postgresql://" + url.split("://", 1)[1]
    return url


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
