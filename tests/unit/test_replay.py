"""Replaying recorded histories: the projector's own decisions re-decided with the same
definitions come out the same, retries and their jitter included; a definition whose guard
was changed diverges at the first event the guard decides, and nowhere before."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from interlock.contracts.registry import Registry
from interlock.definition import Guard, WorkflowDefinition
from interlock.projector.replay import replay
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import accepted, answer, checkpoint, to_awaiting_approval
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY

T0 = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=250)  # every decision sees a different `now`
        return self.now


async def _recorded() -> InMemoryWorkflowStore:
    """Two workflows decided by the projector: one to approval and past it with a refusal
    on the way, one through a retried classification."""
    clock = Clock()
    store = InMemoryWorkflowStore(clock=clock)
    projector = Projector(
        store, registry=REGISTRY, clock=clock, parameters={"support": {"retry_delay_scale": 0.5}}
    )
    await to_awaiting_approval(projector, store, "wf-1")
    unentitled = await projector.handle(envelope("APPROVED", workflow_id="wf-1", role="agent"))
    assert (unentitled.accepted, unentitled.reason) == (False, "guard_rejected")
    await accepted(projector.handle(envelope("APPROVED", workflow_id="wf-1")))

    start = envelope("START", workflow_id="wf-2", payload=PAYLOADS["START"])
    await accepted(projector.handle(start))
    await accepted(answer(projector, store, "wf-2", "RETRYABLE_ERROR"))
    timer = (await checkpoint(store, "wf-2")).execution.timers["retry"]
    clock.now = timer.fire_at
    firing = envelope(
        "RETRY_DUE",
        workflow_id="wf-2",
        payload={"timer_id": timer.id, "fire_at": timer.fire_at.isoformat()},
    )
    await accepted(projector.handle(firing))
    await accepted(answer(projector, store, "wf-2", "CLASSIFICATION_SUCCEEDED"))
    return store


def _stricter_confidence(d: WorkflowDefinition) -> WorkflowDefinition:
    """The installed definition with its classification gate tightened to 0.95."""
    strict = Guard(name="confidence_at_least", params={"param": "strict_confidence"})
    rows = tuple(
        row.model_copy(update={"guards": (strict,)})
        if row.guards and row.guards[0].name == "confidence_at_least"
        else row
        for row in d.transitions
    )
    parameters = {**d.parameters, "strict_confidence": 0.95}
    return d.model_copy(update={"transitions": rows, "parameters": parameters})


async def test_the_projectors_decisions_replay_without_divergence() -> None:
    store = await _recorded()

    for workflow_id, events in (("wf-1", 8), ("wf-2", 4)):
        history = await store.history("acme", workflow_id)
        replayed = replay(history, REGISTRY)
        assert (replayed.complete, replayed.events, replayed.divergences) == (True, events, ())
        assert len(history) == events
    refused = [h for h in await store.history("acme", "wf-1") if not h.accepted]
    assert [(h.event["type"], h.reason) for h in refused] == [("APPROVED", "guard_rejected")]


async def test_a_changed_guard_diverges_at_the_event_it_decides() -> None:
    store = await _recorded()
    stricter = Registry(_stricter_confidence(d) for d in REGISTRY)

    history = await store.history("acme", "wf-1")
    replayed = replay(history, stricter)

    classified = next(h for h in history if h.event["type"] == "CLASSIFICATION_SUCCEEDED")
    assert replayed.events == history.index(classified) + 1
    found = {d.field: d for d in replayed.divergences}
    assert {d.event_id for d in replayed.divergences} == {classified.event["event_id"]}
    assert (found["state"].recorded, found["state"].replayed) == (
        classified.outcome["state"],
        "MANUAL_REVIEW",
    )


async def test_a_changed_retry_jitter_or_delay_diverges_in_the_timers() -> None:
    store = await _recorded()
    history = await store.history("acme", "wf-2")
    slower_retry = {**history[1].inputs, "parameters": {"retry_delay_scale": 1.0}}
    tampered = [history[0], replace(history[1], inputs=slower_retry), *history[2:]]

    replayed = replay(tampered, REGISTRY)

    assert [(d.event_id, d.field) for d in replayed.divergences] == [
        (history[1].event["event_id"], "timers")
    ]


async def test_a_refusal_recorded_after_the_next_acceptance_is_re_decided_on_its_own_version() -> (
    None
):
    store = await _recorded()
    history = await store.history("acme", "wf-1")
    refused = next(h for h in history if not h.accepted)
    after = history.index(refused) + 1
    late = [*history[: after - 1], history[after], refused, *history[after + 1 :]]

    replayed = replay(late, REGISTRY)

    assert (replayed.events, replayed.divergences) == (len(history), ())
