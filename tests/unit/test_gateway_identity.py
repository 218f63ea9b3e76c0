"""One webhook sender, one identity: a gateway event id names exactly one sender whatever the
webhook id holds, a sender name that could make two ids collide is refused at start-up, and a
webhook the gateway refused is a record that cannot be redriven."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from interlock.config.settings import GatewaySender
from interlock.contracts.clients import relayed_event_id, relayed_sender
from interlock.messaging.errors import NotRedrivable
from interlock.messaging.letters import Letter, redrive
from interlock.services.gateway import SenderRegistry

SECRET = "whsec_" + "A" * 43 + "="


def _sender() -> GatewaySender:
    return GatewaySender(
        secret=SecretStr(SECRET),
        roles=frozenset({"support_approver"}),
        tenants=frozenset({"acme"}),
        actors=frozenset({"*"}),
    )


@pytest.mark.parametrize(
    ("sender", "webhook_id"), [("a", "b-x"), ("a_b", "x"), ("tickets", "msg-1-2"), ("A9", "-")]
)
def test_a_gateway_event_id_names_exactly_its_sender(sender: str, webhook_id: str) -> None:
    assert relayed_sender(relayed_event_id(sender, webhook_id)) == sender


@pytest.mark.parametrize("event_id", ["gw--x", "gw-a", "approve-1", "gw-a.b-x", "result:x"])
def test_an_event_id_not_of_the_gateways_form_names_no_sender(event_id: str) -> None:
    assert relayed_sender(event_id) is None


@pytest.mark.parametrize("name", ["a-b", "tickets eu", "", "x" * 65, "a.b"])
def test_a_sender_name_outside_the_pattern_is_refused_at_start_up(name: str) -> None:
    with pytest.raises(ValueError, match="gateway sender"):
        SenderRegistry({name: _sender()})


def _refused_webhook() -> Letter:
    return Letter(
        id=7,
        source="gateway",
        reason="schema_mismatch",
        detail="…",
        subject="wf.in.signal.support.gateway",
        stored_at=None,
        headers={"Interlock-Gateway-Sender": "tickets"},
        body=b'{"event_id": "gw-ops-forged"}',
    )


async def test_a_webhook_the_gateway_refused_is_not_redrivable() -> None:
    letter = _refused_webhook()

    with pytest.raises(NotRedrivable) as refused:
        await redrive(None, letter)  # type: ignore[arg-type]  # refused before any I/O

    assert str(refused.value) == letter.not_redrivable()
    assert "sender tickets" in str(refused.value)
    assert "\n" not in str(refused.value)
