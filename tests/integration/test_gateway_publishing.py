"""The approval/webhook gateway publishing, against a real NATS JetStream: a valid approval
becomes one signal envelope on `wf.in.signal.<type>` (once, however often delivered), what is
not a valid signal is refused and recorded on `wf.dlq.gateway`, health follows the NATS
connection, and each request is one server span continuing the caller's trace."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import nats
import pytest
from aiohttp.test_utils import TestClient, TestServer
from nats.aio.client import Client
from opentelemetry.trace import SpanKind

from interlock.contracts import subjects
from interlock.contracts.envelope import MAX_MESSAGE_BYTES, parse_envelope
from interlock.contracts.partitions import routing_key
from tests.support.gateway_webhooks import (
    APPROVAL,
    PATH,
    SECRET,
    Client_,
    count,
    dead_letter,
    gateway_app,
    gateway_client,
    post,
    signed,
)
from tests.support.routing import sent
from tests.support.telemetry import recorded

# The `client` these tests take: a test client of the gateway, streams provisioned.
client = gateway_client
SIGNALS = sent(subjects.SIGNAL, "support", "gateway")


async def test_a_valid_approval_is_published_as_a_signal_envelope(
    client: Client_, nc: Client
) -> None:
    body = {**APPROVAL, "expected_version": 7}
    data, headers = signed(body)
    headers |= {"interlock-correlation-id": "ticket-1042", "interlock-causation-id": "task-9"}
    response = await client.post(PATH, data=data, headers=headers)

    event_id = f"gw-tickets-{headers['webhook-id']}"
    assert response.status == 202
    assert await response.json() == {
        "event_id": event_id,
        "subject": subjects.signal("support", "gateway", routing_key("acme", "wf-1")),
    }
    raw = await nc.jetstream().get_last_msg(subjects.STREAM_IN, SIGNALS)
    event = parse_envelope(raw.data or b"")
    assert (event.event_id, event.type, event.workflow_type, event.workflow_id) == (
        event_id,
        "APPROVED",
        "support",
        "wf-1",
    )
    assert event.actor.model_dump() == APPROVAL["actor"]
    assert event.payload == APPROVAL["payload"]
    assert (event.tenant_id, event.expected_version) == ("acme", 7)
    assert (event.correlation_id, event.causation_id) == ("ticket-1042", "task-9")
    assert abs((datetime.now(UTC) - event.occurred_at).total_seconds()) < 60
    assert (raw.headers or {})[subjects.HEADER_MSG_ID] == event_id
    assert await count(nc, subjects.STREAM_DLQ, ">") == 0


async def test_a_webhook_delivered_twice_is_one_message_and_one_event(
    client: Client_, nc: Client
) -> None:
    data, headers = signed(APPROVAL)
    answers = []
    for _ in range(2):
        response = await client.post(PATH, data=data, headers=headers)
        answers.append((response.status, await response.json()))

    assert answers[0] == answers[1]
    assert answers[0][0] == 202
    assert await count(nc, subjects.STREAM_IN, SIGNALS) == 1


@pytest.mark.parametrize("event_type", ["TELEPORT", "ACTION_EXECUTED", "START", "RETRY_DUE"])
async def test_an_event_that_is_not_a_signal_is_refused(
    client: Client_, nc: Client, event_type: str
) -> None:
    status, answer, _ = await post(client, {**APPROVAL, "type": event_type})

    assert (status, answer["error"]) == (400, "unknown_type")
    assert (await dead_letter(nc)).headers[subjects.HEADER_DLQ_REASON] == "unknown_type"
    assert await count(nc, subjects.STREAM_IN, ">") == 0


@pytest.mark.parametrize(
    ("body", "mentions"),
    [
        ({**APPROVAL, "payload": {"amount": "20.00"}}, "recommendation_version"),
        ({**APPROVAL, "payload": {**APPROVAL["payload"], "limit": "1e9"}}, "limit"),
        ({k: v for k, v in APPROVAL.items() if k != "actor"}, "actor"),
        (b"{not json", "json"),
    ],
)
async def test_an_invalid_body_or_payload_is_refused(
    client: Client_, nc: Client, body: Any, mentions: str
) -> None:
    status, answer, _ = await post(client, body)

    assert (status, answer["error"]) == (400, "schema_mismatch")
    assert mentions in answer["detail"].lower()
    assert (await dead_letter(nc)).headers[subjects.HEADER_DLQ_REASON] == "schema_mismatch"
    assert await count(nc, subjects.STREAM_IN, ">") == 0


async def test_an_oversized_body_is_refused_unread(client: Client_, nc: Client) -> None:
    huge = {**APPROVAL, "payload": {"comment": "x" * MAX_MESSAGE_BYTES}}
    status, answer, _ = await post(client, huge)

    assert (status, answer["error"]) == (413, "oversized")
    assert not (await dead_letter(nc)).data
    assert await count(nc, subjects.STREAM_IN, ">") == 0


async def test_an_unknown_workflow_type_is_not_found(client: Client_, nc: Client) -> None:
    status, answer, _ = await post(client, path="/v1/workflows/payroll/wf-1/signals")

    assert (status, answer["error"]) == (404, "unknown_workflow_type")
    assert await count(nc, subjects.STREAM_IN, ">") == 0


async def test_healthz_reports_the_nats_connection(nats_url: str) -> None:
    own = await nats.connect(nats_url)
    async with TestClient(TestServer(gateway_app(own))) as test_client:
        up = await test_client.get("/healthz")
        assert (up.status, await up.json()) == (200, {"nats": "connected"})
        await own.close()
        down = await test_client.get("/healthz")
        assert down.status == 503


async def test_a_request_is_one_server_span_continuing_the_callers_trace(
    client: Client_, nc: Client
) -> None:
    spans = recorded()
    trace_id, parent_id = uuid.uuid4().hex, uuid.uuid4().hex[:16]
    data, headers = signed(APPROVAL)
    headers["traceparent"] = f"00-{trace_id}-{parent_id}-01"
    assert (await client.post(PATH, data=data, headers=headers)).status == 202

    mine = [s for s in spans.finished() if format(s.context.trace_id, "032x") == trace_id]
    (server,) = [s for s in mine if s.kind == SpanKind.SERVER]
    (producer,) = [s for s in mine if s.kind == SpanKind.PRODUCER]
    assert server.name == "POST /v1/workflows/{workflow_type}/{workflow_id}/signals"
    assert server.parent is not None
    assert format(server.parent.span_id, "016x") == parent_id
    assert producer.parent is not None
    assert producer.parent.span_id == server.context.span_id
    attributes = dict(server.attributes or {})
    assert attributes["http.request.method"] == "POST"
    assert attributes["http.response.status_code"] == 202
    assert attributes["interlock.workflow_id"] == "wf-1"
    text = json.dumps([dict(s.attributes or {}) for s in mine], default=str)
    for secret in (headers["webhook-signature"], SECRET.removeprefix("whsec_"), "20.00"):
        assert secret not in text, "no signature, secret or body on spans"
    raw = await nc.jetstream().get_last_msg(subjects.STREAM_IN, SIGNALS)
    assert trace_id in (raw.headers or {})["traceparent"]
