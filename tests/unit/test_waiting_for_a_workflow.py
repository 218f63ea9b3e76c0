"""A message for a workflow that does not exist yet waits in the projector, kept alive, and is
decided again as soon as a decision of that workflow is accepted here (its request, published
elsewhere and behind it), not after a redelivery delay; without that, once its grace is over."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from interlock.projector.consumer import PATIENCE, dispatching
from interlock.projector.dispatch import KeyedDispatcher
from interlock.projector.parking import PAST_GRACE_S, Parking
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.fake_msg import FakeBroker, FakeMsg
from tests.support.payloads import envelope
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY
from tests.unit.test_projector_acks import CLIENTS

pytestmark = pytest.mark.timeout(20)


class Woken:
    """The parking's holder, recording each hold's delay and whether its workflow's
    acceptance woke it (a hold that ran out is resumed by the dispatcher itself)."""

    def __init__(self, parking: Parking) -> None:
        assert parking.holder is not None
        self._hold = parking.holder
        self.woken: list[bool] = []
        self.delays: list[float] = []
        parking.holder = self

    def __call__(self, msg: Any, delay: float) -> Callable[[], None]:
        index = len(self.delays)
        self.delays.append(delay)
        self.woken.append(False)
        wake = self._hold(msg, delay)

        def woken() -> None:
            self.woken[index] = True
            wake()

        return woken


def _consumer(
    broker: FakeBroker | None = None,
) -> tuple[InMemoryWorkflowStore, Parking, KeyedDispatcher]:
    """A store, and the projector's consumer on it (publishing on `broker`) as `consumer.run`
    wires it."""
    store = InMemoryWorkflowStore()
    projector = Projector(store, registry=REGISTRY, clients=CLIENTS)
    parking = PATIENCE.parking()
    dispatcher = dispatching(cast(Any, broker or FakeBroker()), projector, parking, workers=4)
    return store, parking, dispatcher


async def _ended(msg: FakeMsg) -> bool:
    return bool(msg.endings)


async def test_a_signal_ahead_of_its_request_is_decided_once_the_workflow_is_created() -> None:
    store, parking, dispatcher = _consumer()
    woken = Woken(parking)
    cancel = envelope("CANCEL_REQUESTED", workflow_id="wf-late", role="operator")
    early = FakeMsg.of(cancel, sequence=1)
    start = FakeMsg.of(envelope("START", workflow_id="wf-late"), sequence=2)
    try:
        await dispatcher.submit(cast(Any, early))
        await eventually(lambda: _held(parking), what="the signal waiting for its workflow")
        assert early.endings == []  # neither nak'd nor dead-lettered: kept, and kept alive

        await dispatcher.submit(cast(Any, start))
        await eventually(lambda: _ended(early), what="the signal decided again")
    finally:
        await dispatcher.aclose()

    assert woken.woken[0]  # by the request's acceptance, not by its delay
    assert early.pings >= 2  # as its hold began, and as it was woken
    assert (start.endings, early.endings) == ([("ack", None)], [("ack", None)])
    stored = await store.load("acme", "wf-late")
    assert stored is not None
    assert stored.workflow.state == "CANCELLED"
    assert not parking.waits(("WF_IN", 1))


async def test_a_signal_whose_workflow_does_not_come_is_held_once_until_its_grace_runs_out() -> (
    None
):
    """Not decided again and again meanwhile: a signal for a workflow nobody creates (an
    attacker's made-up id) was once decided after 0.5, 1, 2 ... s, a checkpoint read and a
    refusal each time, on the event loop every tenant's work shares."""
    broker = FakeBroker()
    _, parking, dispatcher = _consumer(broker)
    woken = Woken(parking)
    grace = PATIENCE.unknown_workflow_grace
    sent = datetime.now(UTC) - timedelta(seconds=grace - 1.0)  # one second of grace left
    ghost = envelope("CANCEL_REQUESTED", workflow_id="wf-never", role="operator")
    early = FakeMsg.of(ghost, published_at=sent)
    try:
        await dispatcher.submit(cast(Any, early))
        await eventually(lambda: _ended(early), what="the signal dead-lettered", within=10)
    finally:
        await dispatcher.aclose()

    assert len(woken.delays) == 1  # held once, for the rest of its grace
    assert 0.5 < woken.delays[0] <= 1.0 + PAST_GRACE_S
    assert not woken.woken[0]  # nothing woke it
    assert early.ending == "term"
    assert broker.reasons() == ["unknown_workflow"]
    # Reported in progress as its hold started and ended, not only after a full keep-alive
    # period: holds, decisions and waits for a slot must not add up to the ack wait.
    assert early.pings >= 2


async def test_a_signal_woken_by_its_workflow_keeps_its_place_before_its_senders_later_ones() -> (
    None
):
    store, parking, dispatcher = _consumer()

    def cancel(event_id: str) -> Any:
        return envelope("CANCEL_REQUESTED", workflow_id="wf-o", role="operator", event_id=event_id)

    early = FakeMsg.of(cancel("cancel-first"), sequence=1)
    start = FakeMsg.of(envelope("START", workflow_id="wf-o"), sequence=2)
    later = FakeMsg.of(cancel("cancel-second"), sequence=3)
    try:
        await dispatcher.submit(cast(Any, early))
        await eventually(lambda: _held(parking), what="the first cancellation waiting")
        await dispatcher.submit(cast(Any, start))  # the request and the operator's next
        await dispatcher.submit(cast(Any, later))  # message queue together in its line
        await eventually(lambda: _ended(early), what="the first cancellation decided")
        await eventually(lambda: _ended(later), what="the second cancellation decided")
    finally:
        await dispatcher.aclose()

    accepted = [h.event["event_id"] for h in await store.history("acme", "wf-o") if h.accepted]
    # The operator's messages are decided in the order it sent them: the first cancels.
    assert accepted[1:] == ["cancel-first"]


async def _held(parking: Parking) -> bool:
    return parking.waits(("WF_IN", 1))


async def _held_times(woken: Woken, times: int) -> bool:
    return len(woken.delays) >= times
