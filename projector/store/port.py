"""The store port: what the projector needs from persistence, and how each call may fail.

Two implementations keep the same promises and fail the same way (one contract suite runs
against both): `PostgresWorkflowStore` (`projector.store.postgres`), the one production uses,
and `InMemoryWorkflowStore` (`projector.store.memory`), for fast tests. Every write is atomic:
it happens entirely or not at all.

Failures are `ConcurrencyConflict` and `DuplicateEvent` (`projector.errors`) and
`StoreUnavailable` (`contracts.errors`): the database cannot be reached, nothing is known to
be written, every method may raise it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from interlock.contracts.envelope import Envelope
from interlock.projector.engine.model import Accepted, Context, Rejected, Workflow
from interlock.projector.store.records import HistoryRecord
from interlock.projector.store.types import Stored, TraceInfo


class WorkflowStore(Protocol):
    """Where the projector keeps workflows. Every method raises `StoreUnavailable` when the
    database cannot be reached: nothing of that call is known to be written."""

    async def load(
        self, tenant_id: str, workflow_id: str, event_id: str | None = None
    ) -> Stored | None:
        """The tenant's workflow's current checkpoint, or None if the tenant has none by that
        id (another tenant's workflow of the same id is never seen); `seen_event_ids` holds
        `event_id` if that event was already accepted for this workflow."""
        ...

    async def job_stage(
        self, tenant_id: str, workflow_id: str, workflow_type: str, job_id: str
    ) -> str | None:
        """The stage of job `job_id` if the tenant's workflow of that type lists it open, as
        committed; None otherwise (no such workflow, or the job is not open)."""
        ...

    async def create(
        self,
        decision: Accepted,
        event: Envelope,
        fingerprint: str,
        trace: TraceInfo,
        ctx: Context | None = None,
    ) -> bool:
        """Create the workflow with its first transition (state, audit, processed event,
        outbox, timers, history); False, writing nothing, if its tenant already has a
        workflow with that id. `ctx` is what the decision was made in, kept in the history
        (None: outside the engine)."""
        ...

    async def commit(
        self, decision: Accepted, event: Envelope, trace: TraceInfo, ctx: Context | None = None
    ) -> None:
        """Apply an accepted decision (and keep it in the history) if the workflow is still at
        the version it was decided on; else `ConcurrencyConflict`, or `DuplicateEvent` if the
        event was already accepted for this workflow. Either failure writes nothing."""
        ...

    async def reject(
        self,
        workflow: Workflow,
        event: Envelope,
        rejection: Rejected,
        trace: TraceInfo,
        ctx: Context | None = None,
        *,
        at_version: bool = False,
    ) -> bool:
        """Audit a refused event without changing the workflow or reserving its id (the same
        id may still be accepted later). True if an audit row (and a history row) was
        written; False if this event's refusal was audited before, or it repeats a request
        (`idempotent_replay`, `idempotency_conflict`) whose first repeat of that reason was
        audited: repeats are counted on the workflow (`replays`) instead. `at_version`: only
        if the workflow is still at `workflow`'s version and the event was not accepted for
        it (a refusal decided on a cached checkpoint, which may not know either); else
        `ConcurrencyConflict`, writing nothing."""
        ...

    async def history(self, tenant_id: str, workflow_id: str) -> list[HistoryRecord]:
        """The tenant's workflow's decided events, accepted and refused, in the order they
        were decided ([] if none are kept)."""
        ...

    async def decided(
        self, tenant_id: str, workflow_id: str, event_id: str
    ) -> Mapping[str, Any] | None:
        """The event accepted under `event_id` on the workflow, as it was decided (None: none
        is kept, e.g. archived by retention)."""
        ...
