"""The one ordered publisher of the projector, the relay and the timer service: messages leave
in the order given, the head alone when asked, the rest pipelined, and the caller learns the
acknowledged prefix and why it ends."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest
from nats.js.api import PubAck

from interlock.messaging.ordered import OrderedPublisher, Outgoing

pytestmark = pytest.mark.timeout(10)


class FakeJetStream:
    """Records each publish as it starts, and answers them only when told to."""

    def __init__(self, failing: frozenset[str] = frozenset()) -> None:
        self.started: list[str] = []
        self.gates: dict[str, asyncio.Event] = {}
        self.failing = failing
        self.hold = False

    async def publish(self, subject: str, payload: bytes, **options: Any) -> PubAck:
        self.started.append(subject)
        if self.hold:
            gate = self.gates.setdefault(subject, asyncio.Event())
            await gate.wait()
        else:
            await asyncio.sleep(0)
        if subject in self.failing:
            raise TimeoutError(subject)
        return PubAck(stream="S", seq=len(self.started), duplicate=subject == "dup")


async def _run_ready() -> None:
    """Let every task that can run, run (a few turns of the loop; no waiting on the clock)."""
    for _ in range(10):
        await asyncio.sleep(0)


def _messages(*subjects: str) -> list[Outgoing]:
    return [Outgoing(s, {"Nats-Msg-Id": s}, b"") for s in subjects]


async def test_the_head_goes_alone_and_the_rest_leave_together_in_order() -> None:
    js = FakeJetStream()
    js.hold = True
    publishing = asyncio.create_task(
        OrderedPublisher(cast(Any, js)).publish(_messages("a", "b", "c"))
    )
    await _run_ready()
    assert js.started == ["a"]  # nothing behind the head until it is acknowledged

    js.gates["a"].set()
    await _run_ready()
    assert js.started == ["a", "b", "c"]  # both sent before either is acknowledged

    for gate in ("b", "c"):
        js.gates[gate].set()
    sent = await publishing
    assert (sent.acked, sent.error, len(sent.acks)) == (3, None, 3)


async def test_without_a_lone_head_every_message_leaves_at_once() -> None:
    js = FakeJetStream()
    js.hold = True
    publishing = asyncio.create_task(
        OrderedPublisher(cast(Any, js)).publish(_messages("a", "b"), head_alone=False)
    )
    await _run_ready()
    assert js.started == ["a", "b"]
    for gate in js.gates.values():
        gate.set()
    assert (await publishing).acked == 2


async def test_the_acknowledged_prefix_ends_at_the_first_failure_and_each_outcome_is_told() -> None:
    js = FakeJetStream(failing=frozenset({"b"}))
    told: list[tuple[int, str]] = []

    def observe(index: int, message: Outgoing) -> Any:
        return lambda outcome: told.append((index, type(outcome).__name__))

    sent = await OrderedPublisher(cast(Any, js)).publish(_messages("a", "b", "dup"), observe)

    assert sent.acked == 1
    assert isinstance(sent.error, TimeoutError)
    assert [ack.seq for ack in sent.acks] == [1]
    assert sorted(told) == [(0, "PubAck"), (1, "TimeoutError"), (2, "PubAck")]


async def test_a_failing_head_sends_nothing_behind_it() -> None:
    js = FakeJetStream(failing=frozenset({"a"}))

    sent = await OrderedPublisher(cast(Any, js)).publish(_messages("a", "b", "c"))

    assert (sent.acked, js.started) == (0, ["a"])
    assert isinstance(sent.error, TimeoutError)


async def test_nothing_to_publish_publishes_nothing() -> None:
    js = FakeJetStream()
    assert (await OrderedPublisher(cast(Any, js)).publish([])).acked == 0
    assert js.started == []
