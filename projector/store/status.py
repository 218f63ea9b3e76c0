"""The gateway's one read: a workflow's state and the outcome of one of its events, through
`interlock_workflow_status` (migration 0009), the only thing the gateway's role may run."""

from __future__ import annotations

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.projector.store.database import database_pool

_STATUS = text(
    "SELECT state, version, updated_at, event_accepted, event_reason, event_detail, "
    "event_failed_guards "
    "FROM interlock_workflow_status(:tenant, :workflow_type, :workflow_id, :event_id)"
)


class StatusReader:
    """Reads through a small pool of its own; `close` when done."""

    def __init__(self, database_url: str) -> None:
        self._pool: AsyncEngine = database_pool(database_url, pool_size=2)

    async def __call__(
        self, tenant: str, workflow_type: str, workflow_id: str, event_id: str | None
    ) -> dict[str, Any] | None:
        """The workflow's `state`, `version`, `updated_at` and, for `event_id`, `accepted`
        (None: not decided), `reason`, `detail`, `failed_guards`; None if there is no such
        workflow."""
        async with self._pool.connect() as connection:
            row = (
                await connection.execute(
                    _STATUS,
                    {
                        "tenant": tenant,
                        "workflow_type": workflow_type,
                        "workflow_id": workflow_id,
                        "event_id": event_id,
                    },
                )
            ).first()
        if row is None:
            return None
        return {
            "state": row.state,
            "version": row.version,
            "updated_at": row.updated_at,
            "accepted": row.event_accepted,
            "reason": row.event_reason,
            "detail": row.event_detail,
            "failed_guards": list(row.event_failed_guards or ()),
        }

    async def close(self) -> None:
        await self._pool.dispose()
