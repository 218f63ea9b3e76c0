"""Reading recorded histories back for a replay, whole workflows at a time."""

from __future__ import annotations

from datetime import datetime

import asyncpg

from interlock.contracts.errors import StoreUnavailable
from interlock.contracts.urls import asyncpg_dsn
from interlock.projector.store import rows
from interlock.projector.store.postgres import json_codecs
from interlock.projector.store.records import HistoryRecord

HISTORIES = """
WITH chosen AS (
    SELECT tenant_id, workflow_id, min(seq) AS first
    FROM history
    WHERE $1::text IS NULL OR workflow_type = $1
    GROUP BY tenant_id, workflow_id
    HAVING $2::timestamptz IS NULL OR max(recorded_at) >= $2
    ORDER BY min(seq) DESC
    LIMIT $3
)
SELECT h.tenant_id, h.workflow_id, h.workflow_type, h.definition_version, h.event, h.accepted,
       h.reason, h.from_version, h.inputs, h.outcome, h.recorded_at
FROM history h JOIN chosen c USING (tenant_id, workflow_id)
ORDER BY c.first, h.seq
"""
"""The histories of the `$3` most recently started workflows (all when NULL) of type `$1`
(any when NULL) that decided an event at or after `$2` (any time when NULL)."""


async def read_histories(
    database_url: str,
    *,
    workflow_type: str | None = None,
    since: datetime | None = None,
    limit: int | None = None,
) -> list[list[HistoryRecord]]:
    """Each chosen workflow's history in the order it was decided, oldest workflow first."""
    try:
        connection = await asyncpg.connect(asyncpg_dsn(database_url), timeout=10)
    except (OSError, asyncpg.PostgresError) as exc:
        raise StoreUnavailable(f"cannot reach the database: {type(exc).__name__}") from exc
    try:
        await json_codecs(connection)
        found = await connection.fetch(HISTORIES, workflow_type, since, limit)
    finally:
        await connection.close()
    histories: dict[tuple[str, str], list[HistoryRecord]] = {}
    for row in found:
        histories.setdefault((row["tenant_id"], row["workflow_id"]), []).append(
            rows.history_record(row)
        )
    return list(histories.values())
