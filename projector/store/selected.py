"""The workflows a bulk operator command selects, read in one query (`interlock.ops.bulk`)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from interlock.projector.store.operator_log import opened
from interlock.projector.store.postgres import json_codecs

SELECTED = """
SELECT id, workflow_type, tenant_id, state, version, definition_version, data, execution,
       fingerprint, correlation_id, updated_at, false AS seen
FROM workflows
WHERE workflow_type = $1
  AND (cardinality($2::text[]) = 0 OR state = ANY($2::text[]))
  AND ($3::text IS NULL OR tenant_id = $3)
  AND ($4::float8 IS NULL OR updated_at >= now() - make_interval(secs => $4))
  AND ($5::text IS NULL OR coalesce(execution -> 'review' ->> 'reason',
                                     data -> 'last_error' ->> 'error_class') = $5)
ORDER BY updated_at, id
LIMIT $6
"""
"""Longest unchanged first; `reason` is the review reason, else the last failure's class."""


async def rows(
    database_url: str,
    workflow_type: str,
    *,
    states: list[str],
    tenant_id: str | None,
    since_seconds: float | None,
    reason: str | None,
    limit: int,
) -> tuple[list[Mapping[str, Any]], datetime]:
    """The matching `workflows` rows (JSON decoded, as `rows.workflow_of` reads them) and the
    database's time they were read at."""
    async with opened(database_url) as connection:
        await json_codecs(connection)
        found = await connection.fetch(
            SELECTED, workflow_type, states, tenant_id, since_seconds, reason, limit
        )
        now: datetime = await connection.fetchval("SELECT now()")
    return [dict(r) for r in found], now
