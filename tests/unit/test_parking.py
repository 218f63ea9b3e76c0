"""What one sender may keep waiting for a workflow that does not exist: a bounded share per
sender and in all, a message waiting again not counted twice, released once it is settled."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from interlock.contracts.subjects import parse_inbound
from interlock.projector.parking import Parking, sender
from tests.support.fake_msg import FakeMsg
from tests.support.payloads import envelope


def test_a_sender_past_its_share_is_refused_while_another_still_has_room() -> None:
    parking = Parking(per_sender=2, total=10)

    assert parking.hold("signal:mallory", ("WF_IN", 1))
    assert parking.hold("signal:mallory", ("WF_IN", 2))
    assert not parking.hold("signal:mallory", ("WF_IN", 3))
    assert parking.hold("signal:approvals", ("WF_IN", 4))
    assert parking.held("signal:mallory") == 2


def test_a_message_waiting_again_is_counted_once() -> None:
    parking = Parking(per_sender=1, total=10)

    assert parking.hold("signal:a", ("WF_IN", 7))
    assert parking.hold("signal:a", ("WF_IN", 7))
    assert parking.held("signal:a") == 1


def test_all_senders_together_are_bounded() -> None:
    parking = Parking(per_sender=5, total=3)

    held = [parking.hold(f"signal:c{n}", ("WF_IN", n)) for n in range(5)]

    assert held == [True, True, True, False, False]


def test_the_same_sequence_in_another_stream_is_another_message() -> None:
    parking = Parking(per_sender=5, total=10)

    assert parking.hold("signal:a", ("WF_IN", 1))
    assert parking.hold("signal:a", ("WF_IN_P1", 1))
    assert parking.held("signal:a") == 2
    parking.release(("WF_IN_P1", 1))
    assert parking.held("signal:a") == 1


def test_a_settled_message_frees_its_place() -> None:
    parking = Parking(per_sender=1, total=10)
    assert parking.hold("signal:a", ("WF_IN", 1))

    parking.release(("WF_IN", 1))
    parking.release(("WF_IN", 99))  # never held: nothing to release

    assert parking.held("signal:a") == 0
    assert parking.hold("signal:a", ("WF_IN", 2))
    assert parking.waits(("WF_IN", 2))
    assert not parking.waits(("WF_IN", 1))


def test_each_gateway_sender_has_a_share_of_its_own_and_other_clients_do_not() -> None:
    gateway = parse_inbound("wf.in.signal.support.gateway")
    client = parse_inbound("wf.in.signal.support.approvals")

    assert sender(gateway, "gw-tickets-msg_1") == "signal:gateway/tickets"
    assert sender(gateway, "gw-crm-msg_1") == "signal:gateway/crm"
    # a client naming senders in its event ids gets no extra shares
    assert sender(client, "gw-tickets-msg_1") == "signal:approvals"
    assert sender(parse_inbound("wf.in.result.support.classify")) == "result:classify"


async def test_a_copy_delivered_again_while_the_first_waits_is_woken_with_it() -> None:
    woken: list[int] = []
    parking = Parking(per_sender=5, total=10)
    parking.holder = lambda msg, _delay: lambda: woken.append(cast(FakeMsg, msg).delivered)
    body = envelope("CANCEL_REQUESTED", workflow_id="wf-9", role="operator").to_bytes()
    first, again = FakeMsg(body, sequence=7), FakeMsg(body, sequence=7, delivered=2)
    for copy in (first, again):
        waiting = await parking.wait_for_workflow(
            cast(Any, copy), None, 30.0, None, ("acme", "wf-9")
        )
        assert waiting is None

    parking.moved(("acme", "wf-9"))

    assert sorted(woken) == [1, 2]
    assert parking.held("?") == 1  # one message, counted once
    parking.release(("WF_IN", 7))
    assert not parking.waits(("WF_IN", 7))


def test_a_wake_that_fails_neither_fails_the_decision_nor_skips_the_others() -> None:
    woken: list[int] = []

    def holder(msg: Any, _delay: float) -> Any:
        def wake() -> None:
            if cast(FakeMsg, msg).sequence == 1:
                raise RuntimeError("a line that cannot take it")
            woken.append(cast(FakeMsg, msg).sequence)

        return wake

    parking = Parking(per_sender=5, total=10)
    parking.holder = holder
    body = envelope("CANCEL_REQUESTED", workflow_id="wf-9", role="operator").to_bytes()
    for copy in (FakeMsg(body, sequence=1), FakeMsg(body, sequence=2)):
        asyncio.run(parking.wait_for_workflow(cast(Any, copy), None, 30.0, None, ("acme", "wf-9")))

    parking.moved(("acme", "wf-9"))

    assert woken == [2]
