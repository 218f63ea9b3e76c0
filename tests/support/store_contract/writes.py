"""The store contract: loading, creating and committing."""

from __future__ import annotations

import asyncio

import pytest

from interlock.projector.store import ConcurrencyConflict, DuplicateEvent, WorkflowStore
from interlock.projector.store.records import AuditRecord, ProcessedEvent
from interlock.projector.store.rows import outbox_messages
from tests.support.decisions import T0, TRACE, event, started, step, timer
from tests.support.store_contract.common import (
    OTHER_TRACE,
    StoreRecords,
    audited,
    created,
    trace_of,
)


class WritesContract:
    # --- loading and creating ----------------------------------------------------------

    async def test_an_unknown_workflow_has_no_checkpoint_and_no_trace(
        self, store: WorkflowStore
    ) -> None:
        assert await store.load("acme", "no-such") is None
        assert await store.load("acme", "no-such", "evt-1") is None
        assert await trace_of(store, "acme", "no-such") == {}

    async def test_a_created_workflow_loads_exactly_as_decided(self, store: WorkflowStore) -> None:
        start = await created(store)

        stored = await store.load("acme", "wf-1")

        assert stored is not None
        assert stored.workflow == start.workflow
        assert stored.fingerprint == start.fingerprint
        assert await trace_of(store, "acme", "wf-1") == TRACE.headers

    async def test_creation_writes_audit_processed_event_and_outbox_with_the_workflow(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        wf, request = start.workflow, start.event

        assert await records.audit("wf-1") == [
            AuditRecord(
                tenant_id="acme",
                workflow_id="wf-1",
                workflow_type="support",
                event_id=request.event_id,
                event_type="START",
                from_state=start.decision.from_state,
                to_state=wf.state,
                accepted=True,
                reason=None,
                detail=start.decision.note,
                actor_id=request.actor.id,
                actor_role=request.actor.role,
                state_version=1,
                definition_version=wf.definition_version,
                causation_id=None,
                correlation_id=request.event_id,
                trace_id=TRACE.trace_id,
                guard_results=start.decision.guard_results,
                occurred_at=T0,
            )
        ]
        assert await records.processed("wf-1") == {ProcessedEvent("acme", "wf-1", request.event_id)}
        outbox = [(o.subject, dict(o.headers), o.body) for o in await records.outbox("wf-1")]
        assert outbox == outbox_messages(start.decision, TRACE)
        assert len(outbox) >= 1  # the first job

    async def test_creating_an_existing_id_returns_false_and_writes_nothing(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        first = await created(store)
        again = started("wf-1", payload={**first.event.payload, "amount": "99.00"})

        assert not await store.create(again.decision, again.event, again.fingerprint, OTHER_TRACE)

        stored = await store.load("acme", "wf-1", again.event.event_id)
        assert stored is not None
        assert (stored.workflow, stored.fingerprint) == (first.workflow, first.fingerprint)
        assert await audited(records) == [(first.event.event_id, True)]
        assert len(await records.outbox("wf-1")) == len(outbox_messages(first.decision, TRACE))
        assert await trace_of(store, "acme", "wf-1") == TRACE.headers

    async def test_of_two_concurrent_creations_of_one_id_exactly_one_succeeds(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        a, b = started("wf-1"), started("wf-1")

        results = await asyncio.gather(
            *(store.create(s.decision, s.event, s.fingerprint, TRACE) for s in (a, b))
        )

        assert sorted(results) == [False, True]
        winner = a if results[0] else b
        assert await audited(records) == [(winner.event.event_id, True)]

    # --- committing --------------------------------------------------------------------

    async def test_a_commit_at_the_current_version_advances_the_workflow(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        cancel = event("wf-1")
        decision = step(start.workflow, state="CANCELLED")

        await store.commit(decision, cancel, OTHER_TRACE)

        stored = await store.load("acme", "wf-1", cancel.event_id)
        assert stored is not None
        assert stored.workflow == decision.workflow.model_copy(
            update={"seen_event_ids": frozenset({cancel.event_id})}
        )
        assert stored.fingerprint == start.fingerprint  # creation's, kept
        assert (await records.audit("wf-1"))[-1].to_state == "CANCELLED"
        assert await audited(records) == [(start.event.event_id, True), (cancel.event_id, True)]

    async def test_a_commit_at_a_stale_version_conflicts_and_writes_nothing(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        await store.commit(step(start.workflow), event("wf-1"), TRACE)
        outbox_before, timers_before = await records.outbox("wf-1"), await records.timers("wf-1")
        late = event("wf-1")

        with pytest.raises(ConcurrencyConflict):
            await store.commit(step(start.workflow, arm=(timer("t-late"),)), late, TRACE)

        stored = await store.load("acme", "wf-1", late.event_id)
        assert stored is not None
        assert stored.workflow.version == 2
        assert stored.workflow.seen_event_ids == frozenset()
        assert len(await records.audit("wf-1")) == 2
        assert await records.outbox("wf-1") == outbox_before
        assert await records.timers("wf-1") == timers_before

    async def test_a_commit_to_a_workflow_that_does_not_exist_conflicts(
        self, store: WorkflowStore
    ) -> None:
        ghost = started("wf-ghost").workflow

        with pytest.raises(ConcurrencyConflict):
            await store.commit(step(ghost), event("wf-ghost"), TRACE)
        assert await store.load("acme", "wf-ghost") is None

    async def test_of_two_concurrent_commits_at_one_version_exactly_one_wins(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        rivals = [(step(start.workflow, state=s), event("wf-1")) for s in ("CANCELLED", "FAILED")]

        results = await asyncio.gather(
            *(store.commit(d, e, TRACE) for d, e in rivals), return_exceptions=True
        )

        assert sorted(type(r).__name__ for r in results) == ["ConcurrencyConflict", "NoneType"]
        decision, won = rivals[results.index(None)]
        stored = await store.load("acme", "wf-1")
        assert stored is not None
        assert (stored.workflow.version, stored.workflow.state) == (2, decision.workflow.state)
        assert await audited(records) == [(start.event.event_id, True), (won.event_id, True)]

    async def test_an_event_processed_before_is_a_duplicate_and_writes_nothing(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        cancel = event("wf-1")
        await store.commit(step(start.workflow), cancel, TRACE)
        stored = await store.load("acme", "wf-1")
        assert stored is not None
        timers_before = await records.timers("wf-1")

        with pytest.raises(DuplicateEvent):
            await store.commit(step(stored.workflow, arm=(timer("t-dup"),)), cancel, TRACE)

        again = await store.load("acme", "wf-1")
        assert again is not None
        assert again.workflow.version == 2
        assert len(await records.audit("wf-1")) == 2
        assert await records.timers("wf-1") == timers_before

    async def test_an_event_processed_before_at_a_stale_version_is_a_conflict(
        self, store: WorkflowStore
    ) -> None:
        start = await created(store)
        cancel = event("wf-1")
        await store.commit(step(start.workflow), cancel, TRACE)

        with pytest.raises(ConcurrencyConflict):  # decided again, it is found processed
            await store.commit(step(start.workflow), cancel, TRACE)

    async def test_an_event_id_is_processed_per_workflow(self, store: WorkflowStore) -> None:
        one, two = await created(store, "wf-1"), await created(store, "wf-2")
        shared = event("wf-1", event_id="shared-id")

        await store.commit(step(one.workflow), shared, TRACE)
        await store.commit(step(two.workflow), event("wf-2", event_id="shared-id"), TRACE)

        for workflow_id in ("wf-1", "wf-2"):
            seen = await store.load("acme", workflow_id, "shared-id")
            assert seen is not None
            assert seen.workflow.seen_event_ids == {"shared-id"}
        unseen = await store.load("acme", "wf-1", "other-id")
        assert unseen is not None
        assert unseen.workflow.seen_event_ids == frozenset()
