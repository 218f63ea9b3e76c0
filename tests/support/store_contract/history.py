"""The store contract: the history of decided events, written with the decision itself."""

from __future__ import annotations

from datetime import timedelta

import pytest

from interlock.projector.digest import outcome
from interlock.projector.engine import Context
from interlock.projector.store import ConcurrencyConflict, WorkflowStore
from tests.support.decisions import T0, TRACE, event, refusal, started, step

LATER = Context(now=T0 + timedelta(minutes=3), parameters={"approval_timeout_seconds": 60})


class HistoryContract:
    async def test_every_accepted_event_is_kept_with_its_payload_inputs_and_outcome(
        self, store: WorkflowStore
    ) -> None:
        start = started("wf-1")
        assert await store.create(start.decision, start.event, start.fingerprint, TRACE, LATER)
        moved = step(start.workflow)
        cancel = event("wf-1")
        await store.commit(moved, cancel, TRACE, Context(now=T0))

        kept = await store.history("acme", "wf-1")

        assert [h.event["event_id"] for h in kept] == [start.event.event_id, cancel.event_id]
        first, second = kept
        assert first.event == start.event.model_dump(mode="json")
        assert first.event["payload"] == start.event.payload
        assert (first.accepted, first.reason, first.from_version) == (True, None, 0)
        assert first.inputs == {
            "now": LATER.now.isoformat(),
            "parameters": {"approval_timeout_seconds": 60},
        }
        assert first.outcome == outcome(start.decision)
        assert (first.workflow_type, first.definition_version) == (
            "support",
            start.workflow.definition_version,
        )
        assert second.outcome == outcome(moved)
        assert (second.from_version, second.inputs["now"]) == (1, T0.isoformat())

    async def test_a_refusal_is_kept_once_with_its_reason_and_no_inputs_outside_the_engine(
        self, store: WorkflowStore
    ) -> None:
        start = started("wf-1")
        assert await store.create(start.decision, start.event, start.fingerprint, TRACE)
        late = event("wf-1", "APPROVED")

        for _ in range(2):
            await store.reject(start.workflow, late, refusal("guard_rejected"), TRACE)

        kept = await store.history("acme", "wf-1")
        assert [(h.event["event_id"], h.accepted, h.reason) for h in kept[1:]] == [
            (late.event_id, False, "guard_rejected")
        ]
        assert kept[1].outcome == {"accepted": False, "reason": "guard_rejected"}
        assert kept[1].from_version == 1
        assert kept[0].inputs == {"now": None, "parameters": {}}

    async def test_a_lost_race_keeps_nothing_in_the_history(self, store: WorkflowStore) -> None:
        start = started("wf-1")
        assert await store.create(start.decision, start.event, start.fingerprint, TRACE)
        await store.commit(step(start.workflow), event("wf-1"), TRACE)

        with pytest.raises(ConcurrencyConflict):
            await store.commit(step(start.workflow, state="FAILED"), event("wf-1"), TRACE)

        assert len(await store.history("acme", "wf-1")) == 2

    async def test_a_history_is_seen_by_its_own_tenant_only(self, store: WorkflowStore) -> None:
        start = started("order-7", tenant_id="acme")
        assert await store.create(start.decision, start.event, start.fingerprint, TRACE)

        assert await store.history("globex", "order-7") == []
        assert len(await store.history("acme", "order-7")) == 1

    async def test_the_event_decided_under_an_id_is_read_back_accepted_only(
        self, store: WorkflowStore
    ) -> None:
        start = started("wf-1")
        assert await store.create(start.decision, start.event, start.fingerprint, TRACE)
        late = event("wf-1", "APPROVED")
        await store.reject(start.workflow, late, refusal("guard_rejected"), TRACE)

        decided = await store.decided("acme", "wf-1", start.event.event_id)

        assert decided == start.event.model_dump(mode="json")
        assert await store.decided("acme", "wf-1", late.event_id) is None
        assert await store.decided("globex", "wf-1", start.event.event_id) is None
