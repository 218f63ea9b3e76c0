"""What every part of the store contract shares: how it reads records back, and helpers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from interlock.projector.store import WorkflowStore
from interlock.projector.store.records import (
    AuditRecord,
    OutboxRecord,
    ProcessedEvent,
    TimerRecord,
)
from interlock.projector.store.types import TraceInfo
from tests.support.decisions import TRACE, Start, started

CutOff = Callable[[], Awaitable[None]]
OTHER_TRACE = TraceInfo(
    trace_id="0af7651916cd43dd8448eb211c80319c",
    headers={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
)


class StoreRecords(Protocol):
    """What the store wrote for one workflow of one tenant (default `acme`)."""

    async def audit(self, workflow_id: str, tenant_id: str = "acme") -> list[AuditRecord]: ...

    async def processed(self, workflow_id: str, tenant_id: str = "acme") -> set[ProcessedEvent]: ...

    async def outbox(self, workflow_id: str, tenant_id: str = "acme") -> list[OutboxRecord]: ...

    async def timers(self, workflow_id: str, tenant_id: str = "acme") -> list[TimerRecord]:
        """By timer id."""
        ...

    async def replays(self, workflow_id: str, tenant_id: str = "acme") -> dict[str, int]:
        """Repeated requests, counted by reason."""
        ...


async def created(
    store: WorkflowStore, workflow_id: str = "wf-1", tenant_id: str = "acme"
) -> Start:
    start = started(workflow_id, tenant_id=tenant_id)
    assert await store.create(start.decision, start.event, start.fingerprint, TRACE)
    return start


async def audited(
    records: StoreRecords, workflow_id: str = "wf-1", tenant_id: str = "acme"
) -> list[tuple[str, bool]]:
    return [(a.event_id, a.accepted) for a in await records.audit(workflow_id, tenant_id)]


async def trace_of(store: WorkflowStore, tenant_id: str, workflow_id: str) -> dict[str, str]:
    """The trace context the workflow's checkpoint carries ({} when there is none)."""
    stored = await store.load(tenant_id, workflow_id)
    return dict(stored.trace_headers) if stored is not None else {}
