"""Pausing a workflow type, a tenant of it, or one workflow (migration 0018).

While a scope is paused its events are still accepted and decided, but the outbox rows of its
decisions (jobs, announcements) are held back in `held_outbox` by the commit itself
(`projector.store.sql`), its timers stay armed (`relay.timers`) and the sweeper leaves it
alone. Resuming deletes the pause and, in the same transaction, moves every held row no other
pause still covers into the outbox in the order it was held; the relay publishes them in that
order and the timer service is woken for the timers that fell due meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import asyncpg

from interlock.projector.store.operator_log import Entry, record

MAX_TEXT = 500
COVERS = """p.workflow_type = h.workflow_type AND p.tenant_id IN ('', h.tenant_id)
      AND p.workflow_id IN ('', h.workflow_id)"""

PAUSE = """
INSERT INTO pauses (workflow_type, tenant_id, workflow_id, paused_by, reason)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (workflow_type, tenant_id, workflow_id) DO NOTHING
RETURNING paused_at
"""
# Resuming a scope resumes everything paused inside it (a type: each of its tenants too).
UNPAUSE = """
DELETE FROM pauses
WHERE workflow_type = $1 AND ($2 = '' OR tenant_id = $2) AND ($3 = '' OR workflow_id = $3)
RETURNING workflow_type, tenant_id, workflow_id
"""
RELEASE = f"""
WITH released AS (
    DELETE FROM held_outbox h
    WHERE h.workflow_type = $1 AND NOT EXISTS (SELECT 1 FROM pauses p WHERE {COVERS})
    RETURNING h.id, h.tenant_id, h.workflow_id, h.subject, h.headers, h.body
)
INSERT INTO outbox (subject, headers, body, tenant_id, workflow_id)
SELECT subject, headers, body, tenant_id, workflow_id FROM released ORDER BY id
"""
WAKE_TIMERS = "SELECT pg_notify('interlock_timers', extract(epoch FROM now())::text)"
LIST = f"""
SELECT p.workflow_type, p.tenant_id, p.workflow_id, p.paused_at, p.paused_by, p.reason,
       (SELECT count(*) FROM held_outbox h WHERE {COVERS}) AS held
FROM pauses p ORDER BY p.paused_at, p.workflow_type, p.tenant_id, p.workflow_id
"""


@dataclass(frozen=True, slots=True)
class Scope:
    """What a pause covers: a type, optionally one tenant, optionally one workflow."""

    workflow_type: str
    tenant_id: str = ""
    workflow_id: str = ""

    def selection(self) -> dict[str, str]:
        return {
            "type": self.workflow_type,
            **({"tenant": self.tenant_id} if self.tenant_id else {}),
            **({"workflow": self.workflow_id} if self.workflow_id else {}),
        }


async def pause(
    connection: asyncpg.Connection, scope: Scope, operator: str, reason: str = ""
) -> bool:
    """Pause `scope` (audited); False if it was paused already (nothing changes). The
    operator's name and the reason are kept to `MAX_TEXT` characters."""
    operator, reason = operator[:MAX_TEXT], reason[:MAX_TEXT]
    async with connection.transaction():
        paused_at = await connection.fetchval(
            PAUSE, scope.workflow_type, scope.tenant_id, scope.workflow_id, operator, reason
        )
        if paused_at is not None:
            await record(connection, _entry(scope, operator, "pause", "paused", reason))
    return paused_at is not None


async def resume(connection: asyncpg.Connection, scope: Scope, operator: str) -> tuple[int, int]:
    """Resume `scope` and every pause inside it (audited); (pauses lifted, rows released).
    The delete waits for every commit that read one of those pauses, so a row a commit
    held back meanwhile is released here too (each statement sees what committed before it)."""
    async with connection.transaction():
        lifted = await connection.fetch(
            UNPAUSE, scope.workflow_type, scope.tenant_id, scope.workflow_id
        )
        status = await connection.execute(RELEASE, scope.workflow_type)
        released = int(status.rsplit(" ", 1)[-1])
        if lifted:
            detail = f"{released} held outbox row(s) released"
            await record(connection, _entry(scope, operator, "resume", "resumed", detail))
            await connection.execute(WAKE_TIMERS)
    return len(lifted), released


async def paused(connection: asyncpg.Connection) -> list[dict[str, Any]]:
    """Every pause in force, oldest first, with how many outbox rows it holds back."""
    return [
        {
            "workflow_type": r["workflow_type"],
            "tenant_id": r["tenant_id"] or None,
            "workflow_id": r["workflow_id"] or None,
            "paused_at": r["paused_at"].isoformat(),
            "paused_by": r["paused_by"],
            "reason": r["reason"],
            "held": int(r["held"]),
        }
        for r in await connection.fetch(LIST)
    ]


def _entry(scope: Scope, operator: str, action: str, outcome: str, detail: str) -> Entry:
    return Entry(
        operator=operator,
        action=action,
        outcome=outcome,
        selection=scope.selection(),
        workflow_type=scope.workflow_type,
        tenant_id=scope.tenant_id or None,
        workflow_id=scope.workflow_id or None,
        detail=detail or None,
    )
