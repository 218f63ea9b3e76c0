"""Refusals decided on the projector's cached checkpoint: recorded without reading the
workflow again while the checkpoint is still its state, decided again on fresh state when it
is not (or when nothing would be written under that check); a checkpoint read fresh for a
refusal stays cached for the workflow's next event."""

from __future__ import annotations

from typing import Any

from interlock.projector.refusal_bounds import RefusalBounds
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.projector.store.types import Stored
from tests.support.direct import accepted, checkpoint, to_awaiting_approval
from tests.support.door import APPROVALS, CLIENTS, NOW
from tests.support.payloads import envelope, result_event
from tests.support.workflows import REGISTRY


class CountingStore(InMemoryWorkflowStore):
    """Counts the checkpoints read."""

    loads = 0

    async def load(
        self, tenant_id: str, workflow_id: str, event_id: str | None = None
    ) -> Stored | None:
        self.loads += 1
        return await super().load(tenant_id, workflow_id, event_id)


def projector(store: InMemoryWorkflowStore, **options: Any) -> Projector:
    return Projector(
        store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0, clients=CLIENTS, **options
    )


def refused(store: InMemoryWorkflowStore, event_id: str) -> list[tuple[Any, ...]]:
    return [
        (a.reason, a.from_state, a.state_version)
        for a in store.audit("wf-1")
        if a.event_id == event_id and not a.accepted
    ]


async def test_a_refusal_on_the_current_cached_checkpoint_reads_nothing_again() -> None:
    store = CountingStore(clock=lambda: NOW)
    p = projector(store)
    await accepted(p.handle(envelope("START", workflow_id="wf-1")))  # cached: CLASSIFYING
    early = envelope("APPROVED", workflow_id="wf-1")
    loads = store.loads

    outcome = await p.handle(early)

    assert (outcome.accepted, outcome.reason) == (False, "invalid_transition")
    assert store.loads == loads
    assert refused(store, early.event_id) == [("invalid_transition", "CLASSIFYING", 1)]


async def test_a_checkpoint_read_fresh_for_a_refusal_serves_the_workflows_next_event() -> None:
    store = CountingStore(clock=lambda: NOW)
    await accepted(projector(store).handle(envelope("START", workflow_id="wf-1")))
    cold = projector(store)  # another process: nothing cached
    jobs = (await checkpoint(store, "wf-1")).execution.open_jobs
    classified = result_event(
        "wf-1", {j: job.branch for j, job in jobs.items()}, "CLASSIFICATION_SUCCEEDED"
    )
    early = envelope("APPROVED", workflow_id="wf-1")

    loads = store.loads
    assert not (await cold.handle(early)).accepted
    assert store.loads == loads + 1
    await accepted(cold.handle(classified))
    assert store.loads == loads + 1


async def test_a_refusal_on_a_stale_cached_checkpoint_is_recorded_on_the_current_one() -> None:
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    stale = projector(store)
    await accepted(stale.handle(envelope("START", workflow_id="wf-1")))  # cached: v1
    await to_awaiting_approval(projector(store), store, "wf-1", started=True)
    current = await checkpoint(store, "wf-1")
    late = envelope("RESOLVED", workflow_id="wf-1")  # refused in either state

    outcome = await stale.handle(late)

    assert not outcome.accepted
    assert current.version > 1
    assert refused(store, late.event_id) == [(outcome.reason, current.state, current.version)]


async def test_a_sender_past_its_bound_is_not_turned_away_by_a_stale_checkpoint() -> None:
    # Past its bound a sender's refusals are dead-lettered, and nothing is written that a
    # version check could catch: such a refusal is decided on fresh state only.
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    bounded = projector(store, refusal_bounds=RefusalBounds(per_workflow=0))
    await accepted(bounded.handle(envelope("START", workflow_id="wf-1")))  # cached: CLASSIFYING
    await to_awaiting_approval(projector(store), store, "wf-1", started=True)

    outcome = await bounded.handle(envelope("APPROVED", workflow_id="wf-1"), inbound=APPROVALS)

    assert (outcome.accepted, outcome.to_state) == (True, "EXECUTING_ACTION")


async def test_a_repeated_request_is_refused_on_the_cached_checkpoint() -> None:
    store = CountingStore(clock=lambda: NOW)
    p = projector(store)
    start = envelope("START", workflow_id="wf-1")
    await accepted(p.handle(start))
    again = start.model_copy(update={"event_id": "replay-1"})
    loads = store.loads

    outcome = await p.handle(again)

    assert (outcome.accepted, outcome.reason) == (False, "idempotent_replay")
    assert store.loads == loads
    assert refused(store, "replay-1") == [("idempotent_replay", "CLASSIFYING", 1)]


async def test_a_repeated_request_on_a_stale_checkpoint_is_recorded_on_the_current_one() -> None:
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    stale = projector(store)
    start = envelope("START", workflow_id="wf-1")
    await accepted(stale.handle(start))  # cached: v1
    await to_awaiting_approval(projector(store), store, "wf-1", started=True)
    current = await checkpoint(store, "wf-1")

    outcome = await stale.handle(start.model_copy(update={"event_id": "replay-1"}))

    assert (outcome.accepted, outcome.reason) == (False, "idempotent_replay")
    assert refused(store, "replay-1") == [("idempotent_replay", current.state, current.version)]
