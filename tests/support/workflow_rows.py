"""Workflow rows inserted with SQL, for tests that need a workflow in a given state without
driving it there through the projector; and workflows read back as `interlock show` does."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import asyncpg

from interlock.ops import queries
from interlock.projector.store.database import database_pool


async def insert_workflow(
    db: asyncpg.Connection,
    workflow_id: str,
    state: str,
    *,
    version: int = 1,
    definition_version: int = 1,
    workflow_type: str = "support",
    tenant_id: str = "acme",
    idle_s: float = 0.0,
) -> None:
    """One `workflows` row with empty data and execution, last updated `idle_s` seconds ago."""
    await db.execute(
        """
        INSERT INTO workflows (id, workflow_type, tenant_id, state, version, definition_version,
                               data, execution, fingerprint, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, '{}', '{}', 'f', now() - make_interval(secs => $7))
        """,
        workflow_id,
        workflow_type,
        tenant_id,
        state,
        version,
        definition_version,
        idle_s,
    )


async def workflow_views(database_url: str, ids: Iterable[str]) -> dict[str, dict[str, Any] | None]:
    """Each workflow's `queries.workflow_view` (None for an unknown id), by workflow id."""
    engine = database_pool(database_url, pool_size=2)
    try:
        return {w: await queries.workflow_view(engine, w) for w in ids}
    finally:
        await engine.dispose()
