"""The store contract: refusing, timers, the trace, audit order and an outage."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest

from interlock.contracts.errors import StoreUnavailable
from interlock.projector.engine import Rejected, RejectReason
from interlock.projector.store import ConcurrencyConflict, DuplicateEvent, WorkflowStore
from interlock.projector.store.records import ProcessedEvent, TimerRecord
from interlock.projector.store.rows import outbox_messages
from tests.support.decisions import T0, TRACE, event, refusal, step, timer
from tests.support.store_contract.common import (
    OTHER_TRACE,
    CutOff,
    StoreRecords,
    audited,
    created,
    trace_of,
)


class RefusalsContract:
    # --- refusing ------------------------------------------------------------------------

    async def test_a_refusal_is_audited_with_its_reason_and_changes_nothing_else(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        late = event("wf-1", "APPROVED")

        audited_now = await store.reject(
            start.workflow, late, refusal("guard_rejected"), OTHER_TRACE
        )

        assert audited_now
        stored = await store.load("acme", "wf-1", late.event_id)
        assert stored is not None
        assert stored.workflow == start.workflow
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
        assert await records.processed("wf-1") == {
            ProcessedEvent("acme", "wf-1", start.event.event_id)
        }
        assert await trace_of(store, "acme", "wf-1") == TRACE.headers  # no trace moved
        assert len(await records.outbox("wf-1")) == len(outbox_messages(start.decision, TRACE))

    async def test_a_refused_event_reserves_nothing_and_may_be_accepted_later(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        squatter = event("wf-1", "APPROVED")
        await store.reject(start.workflow, squatter, refusal(), TRACE)

        await store.commit(step(start.workflow), squatter, TRACE)

        stored = await store.load("acme", "wf-1", squatter.event_id)
        assert stored is not None
        assert (stored.workflow.version, stored.workflow.seen_event_ids) == (
            2,
            frozenset({squatter.event_id}),
        )
        assert await audited(records) == [
            (start.event.event_id, True),
            (squatter.event_id, False),
            (squatter.event_id, True),
        ]

    async def test_a_refusal_decided_again_is_audited_once(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        late = event("wf-1", "APPROVED")

        verdicts = [await store.reject(start.workflow, late, refusal(), TRACE) for _ in range(3)]

        assert verdicts == [True, False, False]
        assert await audited(records) == [(start.event.event_id, True), (late.event_id, False)]

    async def test_of_two_concurrent_refusals_of_one_event_exactly_one_is_audited(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        start = await created(store)
        late = event("wf-1", "APPROVED")

        verdicts = await asyncio.gather(
            *(store.reject(start.workflow, late, refusal(), TRACE) for _ in range(2))
        )

        assert sorted(verdicts) == [False, True]
        assert await audited(records) == [(start.event.event_id, True), (late.event_id, False)]

    @pytest.mark.parametrize("reason", ["invalid_transition", "idempotent_replay"])
    async def test_a_refusal_at_a_version_is_recorded_only_while_the_workflow_is_at_it(
        self, store: WorkflowStore, records: StoreRecords, reason: RejectReason
    ) -> None:
        # A refusal decided on a cached checkpoint stands only if that checkpoint is still
        # the workflow's: else nothing is written and it is decided again on fresh state.
        start = await created(store)
        moved = step(start.workflow)
        await store.commit(moved, event("wf-1"), TRACE)
        late = event("wf-1", "START" if reason == "idempotent_replay" else "APPROVED")

        with pytest.raises(ConcurrencyConflict):
            await store.reject(start.workflow, late, Rejected(reason, "x"), TRACE, at_version=True)
        assert (await records.audit("wf-1"))[-1].accepted
        assert await records.replays("wf-1") == {}
        assert await store.reject(
            moved.workflow, late, Rejected(reason, "x"), TRACE, at_version=True
        )

        refused = (await records.audit("wf-1"))[-1]
        assert (refused.event_id, refused.accepted, refused.state_version) == (
            late.event_id,
            False,
            2,
        )

    async def test_a_refusal_at_a_version_of_an_event_accepted_before_is_not_recorded(
        self, store: WorkflowStore, records: StoreRecords
    ) -> None:
        # A cached checkpoint does not know every id its workflow accepted: such an event is
        # decided again on fresh state (a duplicate, or another message reusing the id).
        start = await created(store)
        moved = step(start.workflow)
        approved = event("wf-1", "APPROVED")
        await store.commit(moved, approved, TRACE)

        with pytest.raises(ConcurrencyConflict):
            await store.reject(moved.workflow, approved, refusal(), TRACE, at_version=True)
        assert [a.accepted for a in await records.audit("wf-1")] == [True, True]

    @pytest.mark.parametrize("reason", ["idempotent_replay", "idempotency_conflict"])
    async def test_repeated_requests_are_audited_once_per_reason_and_then_only_counted(
        self, store: WorkflowStore, records: StoreRecords, reason: RejectReason
    ) -> None:
        start = await created(store)
        repeats = [event("wf-1", "START") for _ in range(3)]

        verdicts = [
            await store.reject(start.workflow, r, Rejected(reason, "again"), TRACE)
            for r in [*repeats, repeats[0]]
        ]

        assert verdicts == [True, False, False, False]
        assert await audited(records) == [
            (start.event.event_id, True),
            (repeats[0].event_id, False),
        ]
        assert await records.replays("wf-1") == {reason: 4}
        stored = await store.load("acme", "wf-1", repeats[0].event_id)
        assert stored is not None
        assert stored.workflow == start.workflow  # counting is no transition

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

        stored = await store.load("acme", "wf-1")
        assert stored is not None
        assert stored.workflow.version == 2
        assert len(await records.audit("wf-1")) == 2

    async def test_the_trace_context_is_the_latest_accepted_transitions(
        self, store: WorkflowStore
    ) -> None:
        start = await created(store)

        await store.commit(step(start.workflow), event("wf-1"), OTHER_TRACE)

        assert await trace_of(store, "acme", "wf-1") == OTHER_TRACE.headers

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
            await store.load("acme", "wf-1")
        with pytest.raises(StoreUnavailable):
            await store.commit(step(start.workflow), event("wf-1"), TRACE)
