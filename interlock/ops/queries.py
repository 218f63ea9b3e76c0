"""Read models for the operator console and the tools: one workflow with its audit trail,
listings, decisions, and the accepted transitions a benchmark measures."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, Row, Table, func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from interlock.ops.errors import AmbiguousWorkflow
from interlock.projector.store.database import database_pool
from interlock.projector.store.schema import audit, workflow_archive, workflows

AUDIT_FIELDS = (
    "event_id",
    "event_type",
    "from_state",
    "to_state",
    "accepted",
    "reason",
    "detail",
    "actor_id",
    "actor_role",
    "state_version",
    "guard_results",
    "causation_id",
    "trace_id",
    "occurred_at",
    "recorded_at",
    "error_class",
    "error_message",
)


def open_reader(database_url: str, *, pool_size: int = 1) -> AsyncEngine:
    """A small pool for reading these models; the caller disposes of it."""
    return database_pool(database_url, pool_size=pool_size)


async def workflow_view(
    engine: AsyncEngine, workflow_id: str, tenant_id: str | None = None
) -> dict[str, Any] | None:
    """`interlock show --json`: state, versions, data, execution and the full audit trail of
    the workflow of that id (of `tenant_id`, which is needed only when several tenants use
    the id: `AmbiguousWorkflow` then)."""
    async with engine.connect() as conn:
        found = await _rows(conn, workflows, workflow_id, tenant_id)
        if not found:
            found = await _rows(conn, workflow_archive, workflow_id, tenant_id)
            return _archived_view(dict(found[0]._mapping)) if len(found) == 1 else None
        if len(found) > 1:
            raise AmbiguousWorkflow(workflow_id, sorted(r.tenant_id for r in found))
        w = dict(found[0]._mapping)
        trail = await conn.execute(
            select(audit)
            .where(audit.c.workflow_id == workflow_id, audit.c.tenant_id == w["tenant_id"])
            .order_by(audit.c.id)
        )
        entries = [_audit_entry(dict(r._mapping)) for r in trail]
    return _view(w, entries, archived=False)


async def _rows(
    conn: AsyncConnection, table: Table, workflow_id: str, tenant_id: str | None
) -> list[Row[Any]]:
    query = select(table).where(table.c.id == workflow_id)
    if tenant_id is not None:
        query = query.where(table.c.tenant_id == tenant_id)
    return list((await conn.execute(query.limit(10))).all())


def _archived_view(w: Mapping[str, Any]) -> dict[str, Any]:
    """A workflow moved to the archive by retention: the same view, its audit as archived."""
    entries = [
        {
            **{k: r.get(k) for k in AUDIT_FIELDS},
            "actor": {"id": r["actor_id"], "role": r["actor_role"]},
        }
        for r in w["audit"]
    ]
    return _view(w, entries, archived=True)


def _view(w: Mapping[str, Any], entries: list[dict[str, Any]], *, archived: bool) -> dict[str, Any]:
    return {
        "workflow_id": w["id"],
        "workflow_type": w["workflow_type"],
        "tenant_id": w["tenant_id"],
        "state": w["state"],
        "version": w["version"],
        "definition_version": w["definition_version"],
        "correlation_id": w["correlation_id"],
        "created_at": w["created_at"].isoformat(),
        "updated_at": w["updated_at"].isoformat(),
        "data": w["data"],
        "execution": w["execution"],
        "replays": w["replays"],
        "archived": archived,
        "audit": entries,
    }


def _audit_entry(r: dict[str, Any]) -> dict[str, Any]:
    entry = {k: r[k] for k in AUDIT_FIELDS}
    entry["actor"] = {"id": r["actor_id"], "role": r["actor_role"]}
    for key in ("occurred_at", "recorded_at"):
        entry[key] = entry[key].isoformat()
    return entry


LISTED = (
    workflows.c.id,
    workflows.c.tenant_id,
    workflows.c.workflow_type,
    workflows.c.state,
    workflows.c.version,
    workflows.c.definition_version,
    workflows.c.updated_at,
)
"""The columns of a workflow in a listing (`interlock list`, the console's pages)."""


async def workflow_list(
    engine: AsyncEngine,
    *,
    state: str | None = None,
    workflow_type: str | None = None,
    tenant_id: str | None = None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """`interlock list`: newest first, optionally filtered by state, type and tenant."""
    query = select(*LISTED).order_by(workflows.c.updated_at.desc())
    if state:
        query = query.where(workflows.c.state == state)
    if workflow_type:
        query = query.where(workflows.c.workflow_type == workflow_type)
    if tenant_id:
        query = query.where(workflows.c.tenant_id == tenant_id)
    async with engine.connect() as conn:
        rows = (await conn.execute(query.limit(limit))).all()
    return [
        {
            "workflow_id": r.id,
            "tenant_id": r.tenant_id,
            "workflow_type": r.workflow_type,
            "state": r.state,
            "version": r.version,
            "definition_version": r.definition_version,
            "updated_at": r.updated_at.isoformat(),
        }
        for r in rows
    ]


async def decision_for(
    engine: AsyncEngine, workflow_id: str, event_id: str, tenant_id: str | None = None
) -> dict[str, Any] | None:
    """The audit entry recorded for `event_id`, once the projector has decided it."""
    query = (
        select(audit)
        .where(audit.c.workflow_id == workflow_id, audit.c.event_id == event_id)
        .order_by(audit.c.id.desc())
        .limit(1)
    )
    if tenant_id is not None:
        query = query.where(audit.c.tenant_id == tenant_id)
    async with engine.connect() as conn:
        row = (await conn.execute(query)).first()
    return _audit_entry(dict(row._mapping)) if row else None


async def start_decision(
    engine: AsyncEngine, workflow_id: str, causation_id: str
) -> dict[str, Any] | None:
    """`{accepted, reason}` of the START caused by `causation_id`, once it is decided."""
    query = select(audit.c.accepted, audit.c.reason).where(
        audit.c.workflow_id == workflow_id,
        audit.c.event_type == "START",
        audit.c.causation_id == causation_id,
    )
    async with engine.connect() as conn:
        row = (await conn.execute(query.limit(1))).first()
    return dict(row._mapping) if row else None


async def accepted_transitions(engine: AsyncEngine, workflow_ids: list[str]) -> int:
    """Accepted transitions committed for these workflows."""
    query = select(func.count()).where(audit.c.workflow_id.in_(workflow_ids), audit.c.accepted)
    async with engine.connect() as conn:
        return int((await conn.execute(query)).scalar_one())


async def decisions_per_workflow(
    engine: AsyncEngine, workflow_ids: list[str]
) -> list[tuple[str, str, int]]:
    """`(tenant_id, workflow_id, decisions)`: the audit rows (accepted and refused) committed
    for each of these workflows."""
    query = (
        select(audit.c.tenant_id, audit.c.workflow_id, func.count())
        .where(audit.c.workflow_id.in_(workflow_ids))
        .group_by(audit.c.tenant_id, audit.c.workflow_id)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return [(r[0], r[1], int(r[2])) for r in rows]


async def accepted_timestamps(
    engine: AsyncEngine, workflow_ids: list[str]
) -> list[tuple[str, datetime, datetime, str]]:
    """`(workflow_id, occurred_at, recorded_at, event_type)` of each accepted transition of
    these workflows, per workflow in commit order."""
    query = (
        select(audit.c.workflow_id, audit.c.occurred_at, audit.c.recorded_at, audit.c.event_type)
        .where(audit.c.workflow_id.in_(workflow_ids), audit.c.accepted)
        .order_by(audit.c.workflow_id, audit.c.id)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return [(r.workflow_id, r.occurred_at, r.recorded_at, r.event_type) for r in rows]


async def refusals_of(engine: AsyncEngine, event_ids: list[str]) -> dict[str, str | None]:
    """For each of these event ids that was decided: the reason it was refused, or None if
    it was only ever accepted."""
    query = (
        select(
            audit.c.event_id,
            func.min(audit.c.reason).filter(~audit.c.accepted).label("reason"),
        )
        .where(audit.c.event_id.in_(event_ids))
        .group_by(audit.c.event_id)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return {r.event_id: r.reason for r in rows}


async def counted_replays(engine: AsyncEngine, workflow_ids: list[str]) -> int:
    """Repeated requests (`idempotent_replay`) the projector counted on these workflows."""
    replays = workflows.c.replays["idempotent_replay"].astext.cast(Integer)
    query = select(func.coalesce(func.sum(replays), 0)).where(workflows.c.id.in_(workflow_ids))
    async with engine.connect() as conn:
        return int((await conn.execute(query)).scalar_one())


async def requests_of(
    engine: AsyncEngine, tenant_id: str, workflow_ids: list[str]
) -> dict[str, dict[str, Any]]:
    """Each workflow's request as recorded: its accepted START's `event_id`, `actor_id`,
    `actor_role` and `occurred_at`, and the request (`data`'s) as `request`."""
    joined = (workflows.c.id == audit.c.workflow_id) & (workflows.c.tenant_id == audit.c.tenant_id)
    columns = (audit.c.workflow_id, audit.c.event_id, audit.c.actor_id, audit.c.actor_role)
    query = (
        select(*columns, audit.c.occurred_at, workflows.c.data["request"].label("request"))
        .join(workflows, joined)
        .where(audit.c.tenant_id == tenant_id, audit.c.workflow_id.in_(workflow_ids))
        .where(audit.c.event_type == "START", audit.c.accepted)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).mappings().all()
    return {r["workflow_id"]: dict(r) for r in rows}


async def executions_of(
    engine: AsyncEngine, tenant_id: str, workflow_ids: list[str]
) -> dict[str, tuple[dict[str, Any], int]]:
    """Each workflow's execution (its open jobs and timers) and state version, from its row
    alone (no audit trail read)."""
    query = select(workflows.c.id, workflows.c.execution, workflows.c.version).where(
        workflows.c.tenant_id == tenant_id, workflows.c.id.in_(workflow_ids)
    )
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    return {r.id: (r.execution or {}, int(r.version)) for r in rows}
