"""The workflow store's contract, one suite for every implementation of the port.

A test module subclasses `StoreContract` and provides three fixtures: `store` (a fresh, empty
`WorkflowStore`), `records` (reads back what the store wrote besides checkpoints) and
`cut_off` (makes the store's database unreachable). The in-memory store runs it in the unit
tier, PostgreSQL in the integration tier, so the double fails exactly where PostgreSQL fails.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import timedelta
from typing import Protocol

import pytest

from interlock.contracts.errors import StoreUnavailable
from interlock.projector.engine import Rejected
from interlock.projector.store import ConcurrencyConflict, DuplicateEvent, WorkflowStore
from interlock.projector.store.records import (
    AuditRecord,
    OutboxRecord,
    ProcessedEvent,
    TimerRecord,
)
from interlock.projector.store.rows import outbox_messages
from interlock.projector.store.types import TraceInfo
from tests.support.decisions import T0, TRACE, Start, event, refusal, started, step, timer

CutOff = Callable[[], Awaitable[None]]
OTHER_TRACE = TraceInfo(
    trace_id="0af7651916cd43dd8448eb211c80319c",
    headers={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
)


class StoreRecords(Protocol):
    async def audit(self, workflow_id: str) -> list[AuditRecord]: ...

    async def processed(self, workflow_id: str) -> set[ProcessedEvent]: ...

    async def outbox(self, workflow_id: str) -> list[OutboxRecord]: ...

    async def timers(self, workflow_id: str) -> list[TimerRecord]:
        """By timer id."""
        ...


async def created(store: WorkflowStore, workflow_id: str = "wf-1") -> Start:
    start = started(workflow_id)
    assert await store.create(start.decision, start.event, start.fingerprint, TRACE)
    return start


async def audited(records: StoreRecords, workflow_id: str = "wf-1") -> list[tuple[str, bool]]:
    return [(a.event_id, a.accepted) for a in await records.audit(workflow_id)]


class StoreContract:
    # --- loading and creating ----------------------------------------------------------

    async def test_an_unknown_workflow_has_no_checkpoint_and_no_trace(
        self, store: WorkflowStore
    ) -> None:
        assert await store.load("no-such") is None
        assert await store.load("no-such", "evt-1") is None
        assert await store.trace_headers("no-such") == {}

    async def test_a_created_workflow_loads_exactly_as_decided(self, store: WorkflowStore) -> None:
        start = await created(store)

        stored = await store.load("wf-1")

        assert stored is not None
        assert stored.workflow == start.workflow
        assert stored.fingerprint == start.fingerprint
        assert await store.trace_headers("wf-1") == TRACE.headers

    async def test_creation_writes_audit_processed_event_and_outbox_with_the_workflow(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        wf, request = start.workflow, start.event

        assert await records.audit("wf-1") == [
            AuditRecord(
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
        assert await records.processed("wf-1") == {ProcessedEvent("wf-1", request.event_id, True)}
        outbox = [(o.subject, dict(o.headers), o.body) for o in await records.outbox("wf-1")]
        assert outbox == outbox_messages(start.decision, TRACE)
        assert len(outbox) >= 2  # the open-jobs record, then the first job

    async def test_creating_an_existing_id_returns_false_and_writes_nothing(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        first = await created(store)
        again = started("wf-1", payload={**first.event.payload, "amount": "99.00"})

        assert not await store.create(again.decision, again.event, again.fingerprint, OTHER_TRACE)

        stored = await store.load("wf-1", again.event.event_id)
        assert stored is not None
        assert (stored.workflow, stored.fingerprint) == (first.workflow, first.fingerprint)
        assert await audited(records) == [(first.event.event_id, True)]
        assert len(await records.outbox("wf-1")) == len(outbox_messages(first.decision, TRACE))
        assert await store.trace_headers("wf-1") == TRACE.headers

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

        stored = await store.load("wf-1", cancel.event_id)
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

        stored = await store.load("wf-1", late.event_id)
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
        assert await store.load("wf-ghost") is None

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
        stored = await store.load("wf-1")
        assert stored is not None
        assert (stored.workflow.version, stored.workflow.state) == (2, decision.workflow.state)
        assert await audited(records) == [(start.event.event_id, True), (won.event_id, True)]

    async def test_an_event_processed_before_is_a_duplicate_and_writes_nothing(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        cancel = event("wf-1")
        await store.commit(step(start.workflow), cancel, TRACE)
        stored = await store.load("wf-1")
        assert stored is not None
        timers_before = await records.timers("wf-1")

        with pytest.raises(DuplicateEvent):
            await store.commit(step(stored.workflow, arm=(timer("t-dup"),)), cancel, TRACE)

        again = await store.load("wf-1")
        assert again is not None
        assert again.workflow.version == 2
        assert len(await records.audit("wf-1")) == 2
        assert await records.timers("wf-1") == timers_before

    async def test_an_event_id_is_processed_per_workflow(self, store: WorkflowStore) -> None:
        one, two = await created(store, "wf-1"), await created(store, "wf-2")
        shared = event("wf-1", event_id="shared-id")

        await store.commit(step(one.workflow), shared, TRACE)
        await store.commit(step(two.workflow), event("wf-2", event_id="shared-id"), TRACE)

        for workflow_id in ("wf-1", "wf-2"):
            seen = await store.load(workflow_id, "shared-id")
            assert seen is not None
            assert seen.workflow.seen_event_ids == {"shared-id"}
        unseen = await store.load("wf-1", "other-id")
        assert unseen is not None
        assert unseen.workflow.seen_event_ids == frozenset()

    # --- refusing ------------------------------------------------------------------------

    async def test_a_refusal_is_audited_with_its_reason_and_changes_nothing_else(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        late = event("wf-1", "APPROVED")

        await store.reject(start.workflow, late, refusal("guard_rejected"), OTHER_TRACE)

        stored = await store.load("wf-1", late.event_id)
        assert stored is not None
        assert stored.workflow == start.workflow.model_copy(
            update={"seen_event_ids": frozenset({late.event_id})}
        )
        refused = (await records.audit("wf-1"))[-1]
        assert (refused.accepted, refused.to_state, refused.reason) == (
            False,
            None,
            "guard_rejected",
        )
        assert (refused.from_state, refused.state_version) == (start.workflow.state, 1)
        assert (refused.detail, refused.trace_id) == (
            "refused: guard_rejected",
            OTHER_TRACE.trace_id,
        )
        assert ProcessedEvent("wf-1", late.event_id, False) in await records.processed("wf-1")
        assert await store.trace_headers("wf-1") == TRACE.headers  # a refusal moves no trace
        assert len(await records.outbox("wf-1")) == len(outbox_messages(start.decision, TRACE))

    async def test_a_refused_event_cannot_be_refused_or_committed_again(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        late = event("wf-1", "APPROVED")
        await store.reject(start.workflow, late, refusal(), TRACE)

        with pytest.raises(DuplicateEvent):
            await store.reject(start.workflow, late, refusal(), TRACE)
        with pytest.raises(DuplicateEvent):
            await store.commit(step(start.workflow), late, TRACE)

        assert await audited(records) == [(start.event.event_id, True), (late.event_id, False)]
        stored = await store.load("wf-1")
        assert stored is not None
        assert stored.workflow.version == 1

    async def test_of_two_concurrent_refusals_of_one_event_exactly_one_is_recorded(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        late = event("wf-1", "APPROVED")

        results = await asyncio.gather(
            *(store.reject(start.workflow, late, refusal(), TRACE) for _ in range(2)),
            return_exceptions=True,
        )

        assert sorted(type(r).__name__ for r in results) == ["DuplicateEvent", "NoneType"]
        assert await audited(records) == [(start.event.event_id, True), (late.event_id, False)]

    @pytest.mark.parametrize(
        "rejection",
        [
            Rejected("idempotent_replay", "same request"),
            Rejected("idempotency_conflict", "changed request"),
            Rejected("stale_version", "timer not due", retry_at=T0 + timedelta(minutes=1)),
        ],
        ids=lambda r: r.reason,
    )
    async def test_replays_and_premature_events_are_audited_each_time_and_never_processed(
        self, store: WorkflowStore, records: StoreRecords, rejection: Rejected
    ) -> None:
        start = await created(store)
        replay = event("wf-1", "START")

        for _ in range(2):
            await store.reject(start.workflow, replay, rejection, TRACE)

        stored = await store.load("wf-1", replay.event_id)
        assert stored is not None
        assert stored.workflow.seen_event_ids == frozenset()
        assert (
            await audited(records)
            == [(start.event.event_id, True)] + [(replay.event_id, False)] * 2
        )
        assert await records.processed("wf-1") == {
            ProcessedEvent("wf-1", start.event.event_id, True)
        }

    # --- timers, trace, order, outage ----------------------------------------------------

    async def test_transitions_arm_and_cancel_timers_atomically(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        first = step(start.workflow, arm=(timer("t-1"), timer("t-2", minutes=9, branch="b")))
        await store.commit(first, event("wf-1"), OTHER_TRACE)
        await store.commit(step(first.workflow, cancel=("t-1", "t-absent")), event("wf-1"), TRACE)

        ours = [t for t in await records.timers("wf-1") if t.id.startswith("t-")]
        armed = TimerRecord(
            id="t-1",
            workflow_id="wf-1",
            workflow_type="support",
            tenant_id="acme",
            kind="retry",
            event_type="RETRY_DUE",
            fire_at=T0 + timedelta(minutes=5),
            branch=None,
            status="armed",
            armed_version=2,
            headers=OTHER_TRACE.headers,
        )
        assert ours == [
            replace(armed, status="cancelled"),
            replace(armed, id="t-2", fire_at=T0 + timedelta(minutes=9), branch="b"),
        ]

    async def test_arming_a_timer_id_that_exists_is_a_duplicate_and_writes_nothing(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        first = step(start.workflow, arm=(timer("t-1"),))
        await store.commit(first, event("wf-1"), TRACE)

        with pytest.raises(DuplicateEvent):
            await store.commit(step(first.workflow, arm=(timer("t-1"),)), event("wf-1"), TRACE)

        stored = await store.load("wf-1")
        assert stored is not None
        assert stored.workflow.version == 2
        assert len(await records.audit("wf-1")) == 2

    async def test_the_trace_context_is_the_latest_accepted_transitions(
        self, store: WorkflowStore
    ) -> None:
        start = await created(store)

        await store.commit(step(start.workflow), event("wf-1"), OTHER_TRACE)

        assert await store.trace_headers("wf-1") == OTHER_TRACE.headers

    async def test_the_audit_trail_is_kept_in_commit_order(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        events = [event("wf-1") for _ in range(4)]
        await store.reject(start.workflow, events[0], refusal(), TRACE)
        moved = step(start.workflow)
        await store.commit(moved, events[1], TRACE)
        await store.reject(moved.workflow, events[2], refusal("terminal"), TRACE)
        await store.commit(step(moved.workflow), events[3], TRACE)

        assert [(a.event_id, a.accepted, a.state_version) for a in await records.audit("wf-1")] == [
            (start.event.event_id, True, 1),
            (events[0].event_id, False, 1),
            (events[1].event_id, True, 2),
            (events[2].event_id, False, 2),
            (events[3].event_id, True, 3),
        ]

    async def test_a_store_cut_off_from_its_database_raises_store_unavailable(
        self, store: WorkflowStore, cut_off: CutOff
    ) -> None:
        start = await created(store)

        await cut_off()

        with pytest.raises(StoreUnavailable):
            await store.load("wf-1")
        with pytest.raises(StoreUnavailable):
            await store.commit(step(start.workflow), event("wf-1"), TRACE)
