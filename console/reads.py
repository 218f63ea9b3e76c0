"""The console's read-only queries. Each is shaped for an index of migration
0007_console_indexes, so pages stay fast with many workflows: listings are keyset-paginated
newest first, filters are (type, state) pairs or a tenant, and an id search is a prefix.

A workflow waits on a person in the waiting states where that is normal (approvals, manual
review, declared waits); it is stuck as the relay's gauge counts it (`relay.stuck`): no
progress where progress was expected, within its state's bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, false, func, select
from sqlalchemy import tuple_ as row
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.contracts.progress import Overrides
from interlock.contracts.registry import Registry
from interlock.ops import queries
from interlock.projector.store.schema import audit, workflows
from interlock.relay.gauges import human_waiting_states
from interlock.relay.store import LAG
from interlock.relay.stuck import stuck_condition

PAGE = 50
_LISTED = (*queries.LISTED, workflows.c.created_at)


@dataclass(frozen=True)
class Filters:
    workflow_type: str = ""
    state: str = ""
    tenant: str = ""
    search: str = ""
    human: bool = False
    stuck: bool = False
    before: str = ""
    """The keyset cursor `<updated_at iso>~<id>` of the last row of the previous page."""


def pairs(columns: tuple[list[str], list[str]]) -> list[tuple[str, str]]:
    return list(zip(*columns, strict=True))


def human_pairs(registry: Registry) -> list[tuple[str, str]]:
    return pairs(human_waiting_states(registry))


def _in_pairs(found: list[tuple[str, str]]) -> ColumnElement[bool]:
    if not found:
        return false()
    return row(workflows.c.workflow_type, workflows.c.state).in_(found)


def _conditions(
    f: Filters, registry: Registry, stuck_after: float, parameters: Overrides
) -> list[ColumnElement[bool]]:
    found: list[ColumnElement[bool]] = []
    if f.workflow_type and f.state:
        found.append(_in_pairs([(f.workflow_type, f.state)]))
    elif f.workflow_type:
        found.append(workflows.c.workflow_type == f.workflow_type)
    elif f.state:
        types = registry.workflow_types()
        found.append(_in_pairs([(t, f.state) for t in types]))
    if f.tenant:
        found.append(workflows.c.tenant_id == f.tenant)
    if f.search:
        escaped = f.search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        found.append(workflows.c.id.like(f"{escaped}%", escape="\\"))
    if f.human:
        found.append(_in_pairs(human_pairs(registry)))
    if f.stuck:
        found.append(
            stuck_condition(registry, parameters, stuck_after, datetime.now(UTC), workflows)
        )
    if f.before and "~" in f.before:
        at, _, workflow_id = f.before.partition("~")
        found.append(
            row(workflows.c.updated_at, workflows.c.id)
            < row(datetime.fromisoformat(at), workflow_id)
        )
    return found


async def list_workflows(
    engine: AsyncEngine,
    f: Filters,
    *,
    registry: Registry,
    stuck_after: float,
    parameters: Overrides | None = None,
    limit: int = PAGE,
) -> tuple[list[dict[str, Any]], str]:
    """A page of workflows, newest first, and the cursor of the next page ('' at the end).
    `stuck_after` and `parameters` (the deployment's overrides) bound the stuck filter."""
    query = (
        select(*_LISTED)
        .where(*_conditions(f, registry, stuck_after, parameters or {}))
        .order_by(workflows.c.updated_at.desc(), workflows.c.id.desc())
        .limit(limit + 1)
    )
    async with engine.connect() as conn:
        rows = [dict(r._mapping) for r in await conn.execute(query)]
    more = len(rows) > limit
    rows = rows[:limit]
    cursor = f"{rows[-1]['updated_at'].isoformat()}~{rows[-1]['id']}" if more else ""
    return rows, cursor


async def state_counts(
    engine: AsyncEngine, f: Filters, *, registry: Registry
) -> list[dict[str, Any]]:
    """Workflows per (type, state) under the type and tenant filters."""
    narrowed = replace(f, state="", search="", human=False, stuck=False, before="")
    query = (
        select(workflows.c.workflow_type, workflows.c.state, func.count().label("n"))
        .where(*_conditions(narrowed, registry, 0.0, {}))
        .group_by(workflows.c.workflow_type, workflows.c.state)
        .order_by(workflows.c.workflow_type, workflows.c.state)
    )
    async with engine.connect() as conn:
        return [dict(r._mapping) for r in await conn.execute(query)]


async def human_tasks(
    engine: AsyncEngine, *, registry: Registry, limit: int = PAGE
) -> list[dict[str, Any]]:
    """Workflows waiting on a person, oldest first (the most urgent on top)."""
    query = (
        select(*_LISTED, workflows.c.data, workflows.c.execution)
        .where(_in_pairs(human_pairs(registry)))
        .order_by(workflows.c.updated_at, workflows.c.id)
        .limit(limit)
    )
    async with engine.connect() as conn:
        return [dict(r._mapping) for r in await conn.execute(query)]


async def activity(engine: AsyncEngine, minutes: int = 60) -> list[dict[str, Any]]:
    """Decisions per minute over the last `minutes`: accepted and refused."""
    since = datetime.now(UTC) - timedelta(minutes=minutes)
    minute = func.date_trunc("minute", audit.c.recorded_at).label("minute")
    query = (
        select(
            minute,
            func.count().filter(audit.c.accepted).label("accepted"),
            func.count().filter(~audit.c.accepted).label("refused"),
        )
        .where(audit.c.recorded_at >= since)
        .group_by(minute)
        .order_by(minute)
    )
    async with engine.connect() as conn:
        return [dict(r._mapping) for r in await conn.execute(query)]


async def refusals(engine: AsyncEngine, minutes: int = 60) -> list[dict[str, Any]]:
    """Refused events by reason over the last `minutes`."""
    since = datetime.now(UTC) - timedelta(minutes=minutes)
    query = (
        select(audit.c.reason, func.count().label("n"))
        .where(audit.c.recorded_at >= since, ~audit.c.accepted)
        .group_by(audit.c.reason)
        .order_by(func.count().desc())
    )
    async with engine.connect() as conn:
        return [dict(r._mapping) for r in await conn.execute(query)]


async def outbox_lag(engine: AsyncEngine, relay: str = "default") -> dict[str, float]:
    """Committed outbox rows the relay has not published yet, and the oldest one's age."""
    async with engine.connect() as conn:
        found = (await conn.exec_driver_sql(LAG, (relay,))).one()
    return {"rows": float(found.rows), "oldest_seconds": float(found.oldest_seconds)}


PAUSED = """
SELECT p.workflow_type, p.tenant_id, p.workflow_id, p.paused_at, p.paused_by, p.reason,
       (SELECT count(*) FROM held_outbox h
        WHERE h.workflow_type = p.workflow_type AND p.tenant_id IN ('', h.tenant_id)
          AND p.workflow_id IN ('', h.workflow_id)) AS held
FROM pauses p ORDER BY p.paused_at, p.workflow_type, p.tenant_id, p.workflow_id
"""
"""The pauses in force (migration 0018), as `interlock paused` lists them."""


async def paused(engine: AsyncEngine) -> list[dict[str, Any]]:
    """What is paused (`interlock pause`), oldest first: scope, since when, by whom, why, and
    how many outbox rows it holds back."""
    async with engine.connect() as conn:
        found = await conn.exec_driver_sql(PAUSED)
        return [dict(r._mapping) for r in found]
