"""Drive a support workflow through `Projector.handle` directly (no broker), and a store
through which a rival writer gets in between a projector's load and its commit."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from interlock.contracts.envelope import Envelope
from interlock.projector.engine import Accepted, Context, Rejected, Workflow
from interlock.projector.service import EventOutcome, Projector
from interlock.projector.store import ConcurrencyConflict, Stored, TraceInfo, WorkflowStore
from interlock.projector.store.records import HistoryRecord
from tests.support.payloads import PAYLOADS, envelope, result_event


async def checkpoint(store: WorkflowStore, workflow_id: str, tenant_id: str = "acme") -> Workflow:
    stored = await store.load(tenant_id, workflow_id)
    assert stored is not None, f"no workflow {workflow_id}"
    return stored.workflow


async def answer(
    projector: Projector,
    store: WorkflowStore,
    workflow_id: str,
    event_type: str,
    payload: dict[str, Any] | None = None,
) -> EventOutcome:
    """Decide a stage result answering the workflow's open job."""
    jobs = (await checkpoint(store, workflow_id)).execution.open_jobs
    event = result_event(
        workflow_id, {j: job.branch for j, job in jobs.items()}, event_type, payload
    )
    return await projector.handle(event)


async def accepted(outcome: Awaitable[EventOutcome]) -> EventOutcome:
    decided = await outcome
    assert decided.accepted, decided
    return decided


async def to_gathering_evidence(
    projector: Projector, store: WorkflowStore, wf: str, *, started: bool = False
) -> None:
    """From nothing (or, `started`, from the workflow just created) to gathering evidence."""
    if not started:
        start = envelope("START", workflow_id=wf, payload=PAYLOADS["START"])
        await accepted(projector.handle(start))
    await accepted(answer(projector, store, wf, "CLASSIFICATION_SUCCEEDED"))


async def to_awaiting_approval(
    projector: Projector, store: WorkflowStore, wf: str, *, started: bool = False
) -> None:
    await to_gathering_evidence(projector, store, wf, started=started)
    for result in ("POLICY_RETRIEVED", "ACCOUNT_INSPECTED", "RECOMMENDATION_GENERATED"):
        await accepted(answer(projector, store, wf, result))
    await accepted(answer(projector, store, wf, "POLICY_VALID"))
    assert (await checkpoint(store, wf)).state == "AWAITING_APPROVAL"


async def to_executing_action(projector: Projector, store: WorkflowStore, wf: str) -> None:
    await to_awaiting_approval(projector, store, wf)
    await accepted(projector.handle(envelope("APPROVED", workflow_id=wf)))
    assert (await checkpoint(store, wf)).state == "EXECUTING_ACTION"


Rival = Callable[[], Awaitable[object]]


class Interleaved:
    """A `WorkflowStore` through which `rival()` (if any) runs just before each of the next
    `times` commits reaches the store: between the projector's load and its commit, where a
    real race between two projectors happens. Records what the store answered: the conflicts
    it raised and the result of each creation."""

    def __init__(self, store: WorkflowStore, rival: Rival | None = None, *, times: int = 1) -> None:
        self._store = store
        self._rival = rival
        self._times = times if rival else 0
        self.conflicts = 0
        self.creations: list[bool] = []

    async def load(
        self, tenant_id: str, workflow_id: str, event_id: str | None = None
    ) -> Stored | None:
        return await self._store.load(tenant_id, workflow_id, event_id)

    async def create(
        self,
        decision: Accepted,
        event: Envelope,
        fingerprint: str,
        trace: TraceInfo,
        ctx: Context | None = None,
    ) -> bool:
        created = await self._store.create(decision, event, fingerprint, trace, ctx)
        self.creations.append(created)
        return created

    async def commit(
        self, decision: Accepted, event: Envelope, trace: TraceInfo, ctx: Context | None = None
    ) -> None:
        if self._rival and self._times > 0:
            self._times -= 1
            await self._rival()
        try:
            await self._store.commit(decision, event, trace, ctx)
        except ConcurrencyConflict:
            self.conflicts += 1
            raise

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
        return await self._store.reject(
            workflow, event, rejection, trace, ctx, at_version=at_version
        )

    async def history(self, tenant_id: str, workflow_id: str) -> list[HistoryRecord]:
        return await self._store.history(tenant_id, workflow_id)

    async def decided(
        self, tenant_id: str, workflow_id: str, event_id: str
    ) -> Mapping[str, Any] | None:
        return await self._store.decided(tenant_id, workflow_id, event_id)
