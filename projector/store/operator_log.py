"""The operator's log (migration 0018): every pause, resume and bulk change, with who did it
and the selection it was part of. Appended to, never updated."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import asyncpg

INSERT = """
INSERT INTO operator_log (operator, action, selection, workflow_type, tenant_id, workflow_id,
                          event_id, outcome, detail)
VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9)
"""


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of the log: `outcome` is what happened (`accepted`, `refused`, `paused`…)."""

    operator: str
    action: str
    outcome: str
    selection: Mapping[str, Any] = field(default_factory=dict)
    workflow_type: str | None = None
    tenant_id: str | None = None
    workflow_id: str | None = None
    event_id: str | None = None
    detail: str | None = None


@asynccontextmanager
async def opened(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A connection of its own on the plain postgresql:// URL, closed after the block (for
    the operator's commands: the log, pauses, selections)."""
    connection = await asyncpg.connect(database_url, timeout=10)
    try:
        yield connection
    finally:
        await connection.close()


async def record(connection: asyncpg.Connection, entry: Entry) -> None:
    """Append `entry` (in the caller's transaction, if it has one)."""
    await connection.execute(
        INSERT,
        entry.operator[:500],
        entry.action[:64],
        json.dumps(dict(entry.selection), sort_keys=True),
        entry.workflow_type,
        entry.tenant_id,
        entry.workflow_id,
        entry.event_id,
        entry.outcome,
        (entry.detail or "")[:1000] or None,
    )


SELECT_LATEST = """
SELECT id, recorded_at, operator, action, selection::text AS selection, workflow_type,
       tenant_id, workflow_id, event_id, outcome, detail
FROM operator_log ORDER BY id DESC LIMIT $1
"""


async def entries(connection: asyncpg.Connection, limit: int = 1000) -> list[dict[str, Any]]:
    """The latest `limit` entries, newest first."""
    rows = await connection.fetch(SELECT_LATEST, limit)
    return [
        {
            **dict(r),
            "selection": json.loads(r["selection"]),
            "recorded_at": r["recorded_at"].isoformat(),
        }
        for r in rows
    ]
