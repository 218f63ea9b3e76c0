"""What leaves a process names ids, fields and error kinds, never the values a message carried:
dead-letter details, logs and span attributes; and inbound W3C baggage stops at the edge."""

from __future__ import annotations

import pytest
from opentelemetry import baggage, context

from interlock.contracts.errors import MalformedMessage
from interlock.otel.propagation import extract, inject
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.payloads import REQUEST, envelope
from tests.support.workflows import REGISTRY

CARD = "4111 1111 1111 1111"


def test_inbound_baggage_is_dropped_at_the_edge() -> None:
    headers = {
        "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "baggage": f"card={CARD.replace(' ', '')}",
    }

    received = extract(headers)

    assert baggage.get_all(received) == {}
    token = context.attach(received)
    try:
        assert "baggage" not in inject()
    finally:
        context.detach(token)


def test_outgoing_headers_never_carry_baggage_set_in_process() -> None:
    token = context.attach(baggage.set_baggage("card", CARD.replace(" ", "")))
    try:
        assert "baggage" not in inject()
    finally:
        context.detach(token)


async def test_a_refused_request_names_the_field_not_its_value() -> None:
    request = envelope("START", workflow_id="wf-1", payload={**REQUEST, "amount": CARD})

    with pytest.raises(MalformedMessage) as refused:
        await Projector(InMemoryWorkflowStore(), registry=REGISTRY).handle(request)

    assert refused.value.reason == "schema_mismatch"
    assert "amount" in refused.value.detail
    assert CARD not in str(refused.value)
