"""Starting a workflow over HTTP: `POST /v1/workflows/{type}`, signed as the gateway's signals
are, becomes a request on `wf.in.request.<type>.gateway` that the projector turns into a
workflow; a payload the type refuses is answered 400 and an unknown type 404, before anything
is published — against real NATS JetStream and PostgreSQL, through the real gateway app and
projector."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient, TestServer
from nats.aio.client import Client
from nats.js import JetStreamContext

from interlock.config.settings import GatewaySender, Settings
from interlock.contracts import subjects
from interlock.contracts.envelope import parse_envelope
from interlock.contracts.partitions import routing_key
from interlock.services.gateway import Limits, SenderRegistry, create_app, jetstream_publisher
from tests.support.gateway_webhooks import (
    SECRET,
    SENDERS,
    Client_,
    count,
    dead_letter,
    gateway_app,
    gateway_client,
    post,
    signed,
)
from tests.support.harness import projector_running
from tests.support.routing import sent
from tests.support.workflows import REGISTRY

# The `client` these tests take: a test client of the gateway, streams provisioned.
client = gateway_client
START = "/v1/workflows/support"
REQUESTS = sent(subjects.REQUEST, "support", "gateway")
UNKEYED = subjects.request("support", "gateway")
REQUEST: dict[str, Any] = {
    "customer_id": "c-1",
    "subject": "Refund for a double charge",
    "body": "Charged twice.",
    "amount": "20.00",
    "currency": "EUR",
}


async def test_a_signed_start_becomes_a_workflow_of_the_senders_tenant(
    nats_url: str, database_url: str
) -> None:
    settings = Settings(gateway_senders=SENDERS)
    async with projector_running(nats_url, database_url, settings=settings) as h:
        async with TestClient(TestServer(gateway_app(h.nc))) as test_client:
            status, answer, headers = await post(test_client, {"payload": REQUEST}, START)

        assert status == 202
        assert answer["event_id"] == f"gw-tickets-{headers['webhook-id']}"
        key = routing_key("acme", answer["workflow_id"])
        assert answer["subject"] == subjects.request("support", "gateway", key)
        decision = await h.decided(answer["workflow_id"], answer["event_id"])
        assert decision["accepted"]
        view = await h.view(answer["workflow_id"])
        assert (view["workflow_type"], view["tenant_id"]) == ("support", "acme")


async def test_a_start_naming_its_workflow_id_starts_that_workflow_once(
    client: Client_, nc: Client
) -> None:
    body = {"payload": REQUEST, "workflow_id": "ticket-1042", "tenant_id": "acme"}
    data, headers = signed(body)
    answers = []
    for _ in range(2):  # the sender delivers the same webhook again
        response = await client.post(START, data=data, headers=headers)
        answers.append((response.status, await response.json()))

    assert answers[0] == answers[1]
    assert answers[0][0] == 202
    assert answers[0][1]["workflow_id"] == "ticket-1042"
    assert await count(nc, subjects.STREAM_IN, REQUESTS) == 1
    raw = await nc.jetstream().get_last_msg(subjects.STREAM_IN, REQUESTS)
    event = parse_envelope(raw.data or b"")
    assert (event.type, event.workflow_id, event.tenant_id) == ("START", "ticket-1042", "acme")
    assert event.actor.id == "tickets"
    assert event.payload == REQUEST


async def test_a_payload_the_type_refuses_is_answered_400_and_never_published(
    client: Client_, nc: Client
) -> None:
    status, answer, _ = await post(client, {"payload": {"customer_id": "c-1"}}, START)

    assert (status, answer["error"]) == (400, "schema_mismatch")
    assert "subject" in answer["detail"]
    assert "c-1" not in answer["detail"]
    assert await count(nc, subjects.STREAM_IN, ">") == 0
    recorded = await dead_letter(nc)
    assert recorded.headers[subjects.HEADER_DLQ_REASON] == "schema_mismatch"
    assert recorded.headers[subjects.HEADER_DLQ_SUBJECT] == UNKEYED


async def test_an_unknown_workflow_type_is_answered_404(client: Client_, nc: Client) -> None:
    status, answer, _ = await post(client, {"payload": REQUEST}, "/v1/workflows/no_such_type")

    assert (status, answer["error"]) == (404, "unknown_workflow_type")
    assert await count(nc, subjects.STREAM_IN, ">") == 0


async def test_a_sender_may_not_start_a_workflow_for_another_tenant(
    client: Client_, nc: Client
) -> None:
    status, answer, _ = await post(client, {"payload": REQUEST, "tenant_id": "globex"}, START)

    assert (status, answer["error"]) == (403, "forged_tenant")
    assert await count(nc, subjects.STREAM_IN, ">") == 0


async def test_a_sender_may_not_start_a_workflow_of_a_type_it_is_not_configured_for(
    nc: Client, js: JetStreamContext
) -> None:
    only_requests = GatewaySender.model_validate(
        {**SENDERS["tickets"].model_dump(), "secret": SECRET, "types": ["request"]}
    )
    app = create_app(
        jetstream_publisher(nc.jetstream()),
        SenderRegistry({"tickets": only_requests}),
        workflows=REGISTRY,
        connected=lambda: nc.is_connected,
        limits=Limits(per_sender=1000.0, unauthenticated=1000.0),
    )
    async with TestClient(TestServer(app)) as test_client:
        status, answer, _ = await post(test_client, {"payload": REQUEST}, START)

    assert (status, answer["error"]) == (403, "forged_type")
    assert await count(nc, subjects.STREAM_IN, ">") == 0
