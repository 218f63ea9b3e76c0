"""Decision slots served round robin by sender: a sender's flood of ready messages delays
another sender's next decision by at most one of its own, not by its whole backlog."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from interlock.contracts.errors import MalformedMessage
from interlock.projector.dispatch import KeyedDispatcher, Parsed
from interlock.projector.fairness import FairSlots, turn_of
from tests.support.fake_msg import FakeMsg
from tests.support.payloads import envelope

pytestmark = pytest.mark.timeout(20)


async def test_a_freed_slot_goes_to_each_waiting_sender_in_turn() -> None:
    slots = FairSlots(1)
    await slots.acquire("flood")
    served: list[str] = []

    async def one(sender: str) -> None:
        await slots.acquire(sender)
        served.append(sender)
        slots.release()

    waiters = [asyncio.create_task(one("flood")) for _ in range(50)]
    await _until(lambda: slots.waiting("flood") == 50)
    waiters.append(asyncio.create_task(one("good")))
    await _until(lambda: slots.waiting("good") == 1)
    slots.release()
    await asyncio.gather(*waiters)
    assert served.index("good") <= 1  # one flood message at most before it, not fifty
    assert len(served) == 51


async def test_a_cancelled_waiter_neither_keeps_nor_loses_a_slot() -> None:
    slots = FairSlots(1)
    await slots.acquire("a")
    gone = asyncio.create_task(slots.acquire("b"))
    await _until(lambda: slots.waiting("b") == 1)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert slots.waiting("b") == 0
    slots.release()
    await asyncio.wait_for(slots.acquire("c"), 1)  # the slot came back, and only one
    late = asyncio.create_task(slots.acquire("d"))
    await _until(lambda: slots.waiting("d") == 1)
    late.cancel()


def test_turns_are_per_sender_and_per_webhook_sender_behind_the_gateway() -> None:
    event = envelope("CANCEL_REQUESTED", workflow_id="wf-1", event_id="gw-acme-123")

    def on(subject: str) -> str:
        return turn_of(cast(Any, FakeMsg(event.to_bytes(), subject)), event)

    assert on("wf.in.signal.support.alice") != on("wf.in.signal.support.bob")
    assert on("wf.in.signal.support.alice") != on("wf.in.result.support.alice")
    assert on("wf.in.signal.support.gateway") == "signal:gateway/acme"
    assert on("wf.in.nonsense") == "?"


async def test_one_senders_backlog_does_not_delay_another_senders_message() -> None:
    order: list[str] = []
    gate = asyncio.Event()

    async def handle(parsed: Parsed) -> None:
        event = parsed[1]
        assert not isinstance(event, MalformedMessage)
        await gate.wait()
        order.append(parsed[0].subject.rsplit(".", 1)[-1])

    def signal(sender: str, n: int) -> Any:
        body = envelope("CANCEL_REQUESTED", workflow_id=f"{sender}-{n}", event_id=f"{sender}-{n}")
        return FakeMsg(body.to_bytes(), f"wf.in.signal.support.{sender}", sequence=n)

    dispatcher = KeyedDispatcher(handle, 2)
    try:
        for n in range(200):
            await dispatcher.submit(signal("flood", n))
        await dispatcher.submit(signal("good", 0))
        await _until(lambda: dispatcher.in_flight == 201)
        gate.set()
        await _until(lambda: "good" in order)
    finally:
        await dispatcher.aclose()
    assert order.index("good") <= 4  # the two in hand, one turn of the flood: not 200


async def _until(condition: Any, within: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)
