"""Every inbound message ends in ack, nak or a reasoned dead letter, whatever fails: the
projector's consumer on the in-memory store, with messages that record how they ended."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from interlock.config.access import client_policies
from interlock.config.settings import Settings
from interlock.contracts.envelope import parse_envelope
from interlock.contracts.errors import MalformedMessage
from interlock.projector.consumer import consume
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.fake_msg import FakeBroker, FakeMsg
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(20)
CLIENTS = client_policies(Settings())
"""The installation's default clients: `upstream`, `approvals`, `operator`."""


def parsed(msg: FakeMsg) -> tuple[Any, Any]:
    try:
        return msg, parse_envelope(msg.data)
    except MalformedMessage as exc:
        return msg, exc


async def _back_after(store: InMemoryWorkflowStore, seconds: float) -> None:
    await asyncio.sleep(seconds)
    store.available = True


async def test_a_store_outage_under_an_untraced_message_is_waited_out_and_it_is_acked() -> None:
    store = InMemoryWorkflowStore()
    projector = Projector(store, registry=REGISTRY, clients=CLIENTS)
    await projector.handle(envelope("START", workflow_id="wf-1"))
    msg = FakeMsg.of(envelope("CANCEL_REQUESTED", workflow_id="wf-1", role="operator"))
    store.available = False  # no traceparent: linked from the checkpoint it is decided on
    returning = asyncio.create_task(_back_after(store, 0.3))

    await consume(cast(Any, FakeBroker()), projector, parsed(msg))

    await returning
    assert msg.endings == [("ack", None)]
    assert (await store.load("acme", "wf-1")).workflow.state == "CANCELLED"  # type: ignore[union-attr]


async def test_a_store_outage_on_the_last_delivery_is_no_reason_to_dead_letter() -> None:
    store = InMemoryWorkflowStore()
    projector = Projector(store, registry=REGISTRY, clients=CLIENTS)
    broker = FakeBroker()
    msg = FakeMsg.of(envelope("START", workflow_id="wf-2"), delivered=50)
    store.available = False
    returning = asyncio.create_task(_back_after(store, 0.3))

    await consume(cast(Any, broker), projector, parsed(msg))

    await returning
    assert broker.published == []
    assert msg.endings == [("ack", None)]
    assert await store.load("acme", "wf-2") is not None


async def test_a_signal_before_its_workflow_is_retried_with_a_bounded_delay() -> None:
    broker = FakeBroker()
    msg = FakeMsg.of(envelope("CANCEL_REQUESTED", workflow_id="not-yet", role="operator"))

    await consume(
        cast(Any, broker),
        Projector(InMemoryWorkflowStore(), registry=REGISTRY, clients=CLIENTS),
        parsed(msg),
    )

    assert broker.published == []
    ((ending, delay),) = msg.endings
    assert ending == "nak"
    assert delay is not None
    assert 0 < delay <= 30


async def test_a_signal_whose_workflow_never_came_is_dead_lettered_unknown_workflow() -> None:
    broker = FakeBroker()
    long_ago = datetime.now(UTC) - timedelta(hours=1)
    body = envelope("CANCEL_REQUESTED", workflow_id="never", role="operator").to_bytes()
    msg = FakeMsg(body, delivered=7, published_at=long_ago)

    await consume(
        cast(Any, broker),
        Projector(InMemoryWorkflowStore(), registry=REGISTRY, clients=CLIENTS),
        parsed(msg),
    )

    assert broker.reasons() == ["unknown_workflow"]
    assert msg.ending == "term"


async def test_a_broker_outage_while_dead_lettering_keeps_the_message_until_it_returns() -> None:
    class Flaky(FakeBroker):
        failures = 2

        async def publish(
            self, data: bytes, subject: str, *, headers: dict[str, str], stream: str
        ) -> None:
            if self.failures:
                self.failures -= 1
                raise ConnectionError("broker restarting")
            await super().publish(data, subject, headers=headers, stream=stream)

    broker = Flaky()
    msg = FakeMsg(b"{not json")

    await consume(
        cast(Any, broker),
        Projector(InMemoryWorkflowStore(), registry=REGISTRY, clients=CLIENTS),
        parsed(msg),
    )

    assert broker.reasons() == ["bad_json"]
    assert msg.ending == "term"


def test_a_nul_character_in_a_text_field_is_refused_at_the_door_as_malformed() -> None:
    event = envelope("START", workflow_id="wf-nul")
    body = event.model_copy(update={"payload": {**event.payload, "subject": "a\x00b"}})

    with pytest.raises(MalformedMessage) as refused:
        parse_envelope(body.to_bytes())

    assert refused.value.reason == "nul_character"


def test_an_escaped_backslash_before_u0000_is_ordinary_text() -> None:
    event = envelope("START", workflow_id="wf-text")
    body = event.model_copy(update={"payload": {**event.payload, "subject": "C:\\u0000"}})

    assert parse_envelope(body.to_bytes()).payload["subject"] == "C:\\u0000"
