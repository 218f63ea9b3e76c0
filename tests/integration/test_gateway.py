"""The approval/webhook gateway: signed webhooks in, signals on `wf.in.signal.<type>` out,
every refusal answered and recorded on `wf.dlq.gateway` — against a real NATS JetStream."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import uuid
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import nats
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from nats.aio.client import Client
from opentelemetry.trace import SpanKind
from standardwebhooks.webhooks import Webhook

from contracts import subjects
from contracts.envelope import MAX_MESSAGE_BYTES, parse_envelope
from interlock.components import Runtime, components
from interlock.settings import GatewaySender, Settings
from interlock.streams import provision
from services.gateway import SenderRegistry, create_app, jetstream_publisher
from tests.support.drive import start, to_awaiting_approval
from tests.support.harness import projector_running
from tests.support.polling import eventually
from tests.support.telemetry import recorded


def _secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


SECRET, OPS_SECRET, WRONG_SECRET = _secret(), _secret(), _secret()
SENDERS = {
    "tickets": GatewaySender.model_validate({"secret": SECRET, "roles": ["support_approver"]}),
    "ops": GatewaySender.model_validate({"secret": OPS_SECRET, "roles": ["operator"]}),
}
PATH = "/v1/workflows/support/wf-1/signals"
APPROVAL: dict[str, Any] = {
    "workflow_id": "wf-1",
    "type": "APPROVED",
    "actor": {"id": "alice", "role": "support_approver"},
    "payload": {"recommendation_version": 1, "amount": "20.00"},
    "tenant_id": "acme",
}

Client_ = TestClient[web.Request, web.Application]


def signed(
    body: Mapping[str, Any] | bytes,
    *,
    sender: str = "tickets",
    secret: str = SECRET,
    at: datetime | None = None,
    msg_id: str | None = None,
) -> tuple[bytes, dict[str, str]]:
    """Body and headers as a Standard Webhooks sender would send them."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    at = at or datetime.now(UTC)
    return data, {
        "content-type": "application/json",
        "interlock-sender": sender,
        "webhook-id": msg_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": Webhook(secret).sign(msg_id, at, data.decode()),
    }


async def post(client: Client_, body: Any = APPROVAL, path: str = PATH, **kw: Any) -> Any:
    data, headers = signed(body, **kw)
    response = await client.post(path, data=data, headers=headers)
    return response.status, await response.json(), headers


async def count(nc: Client, stream: str, subject: str) -> int:
    info = await nc.jetstream().stream_info(stream, subjects_filter=subject)
    return info.state.messages


async def dead_letter(nc: Client) -> Any:
    return await nc.jetstream().get_last_msg(subjects.STREAM_DLQ, subjects.dlq("gateway"))


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[Client]:
    client = await nats.connect(nats_url)
    await provision(client.jetstream())
    yield client
    await client.close()


def gateway_app(nc: Client) -> web.Application:
    registry = SenderRegistry(SENDERS)
    return create_app(
        jetstream_publisher(nc.jetstream()), registry, connected=lambda: nc.is_connected
    )


@pytest.fixture
async def client(nc: Client) -> AsyncIterator[Client_]:
    async with TestClient(TestServer(gateway_app(nc))) as test_client:
        yield test_client


async def test_a_valid_approval_is_published_as_a_signal_envelope(
    client: Client_, nc: Client
) -> None:
    body = {**APPROVAL, "expected_version": 7}
    data, headers = signed(body)
    headers |= {"interlock-correlation-id": "ticket-1042", "interlock-causation-id": "task-9"}
    response = await client.post(PATH, data=data, headers=headers)

    event_id = f"gw-tickets-{headers['webhook-id']}"
    assert response.status == 202
    assert await response.json() == {"event_id": event_id, "subject": "wf.in.signal.support"}
    raw = await nc.jetstream().get_last_msg(subjects.STREAM_IN, subjects.signal("support"))
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
    assert await count(nc, subjects.STREAM_IN, subjects.signal("support")) == 1


async def test_a_bad_signature_is_refused_recorded_and_never_published(
    client: Client_, nc: Client
) -> None:
    status, answer, headers = await post(client, secret=WRONG_SECRET)

    assert (status, answer["error"]) == (401, "bad_signature")
    letter = await dead_letter(nc)
    letter_headers = letter.headers or {}
    assert letter_headers[subjects.HEADER_DLQ_REASON] == "bad_signature"
    assert letter_headers[subjects.HEADER_DLQ_SUBJECT] == subjects.signal("support")
    assert not letter.data, "an unauthenticated body is not kept"
    recorded_text = json.dumps(letter_headers)
    assert headers["webhook-signature"] not in recorded_text
    assert SECRET.removeprefix("whsec_") not in recorded_text
    assert await count(nc, subjects.STREAM_IN, f"{subjects.IN_PREFIX}.signal.>") == 0


async def test_an_old_timestamp_is_refused(client: Client_, nc: Client) -> None:
    status, answer, _ = await post(client, at=datetime.now(UTC) - timedelta(minutes=6))

    assert (status, answer["error"]) == (401, "bad_signature")
    assert "too old" in answer["detail"]
    assert await count(nc, subjects.STREAM_IN, ">") == 0


@pytest.mark.parametrize("sender", ["nobody", ""])
async def test_an_unknown_sender_is_refused(client: Client_, nc: Client, sender: str) -> None:
    status, answer, _ = await post(client, sender=sender)

    assert (status, answer["error"]) == (401, "unknown_sender")
    assert (await dead_letter(nc)).headers[subjects.HEADER_DLQ_REASON] == "unknown_sender"
    assert await count(nc, subjects.STREAM_IN, ">") == 0


async def test_a_role_the_sender_may_not_claim_is_refused_as_a_forged_actor(
    client: Client_, nc: Client
) -> None:
    forged = {**APPROVAL, "actor": {"id": "mallory", "role": "support_supervisor"}}
    status, answer, headers = await post(client, forged)

    assert (status, answer["error"]) == (403, "forged_actor")
    letter = await dead_letter(nc)
    assert letter.headers[subjects.HEADER_DLQ_REASON] == "forged_actor"
    assert letter.headers["Interlock-Gateway-Sender"] == "tickets"
    assert letter.headers["Interlock-Gateway-Webhook-Id"] == headers["webhook-id"]
    assert json.loads(letter.data) == forged
    assert await count(nc, subjects.STREAM_IN, ">") == 0


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
        ({k: v for k, v in APPROVAL.items() if k != "tenant_id"}, "tenant_id"),
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
    raw = await nc.jetstream().get_last_msg(subjects.STREAM_IN, subjects.signal("support"))
    assert trace_id in (raw.headers or {})["traceparent"]


@pytest.mark.parametrize("secret", ["whsec_", "whsec_not*base64!", ""])
def test_a_malformed_secret_stops_the_gateway_at_start_without_echoing_it(secret: str) -> None:
    config = GatewaySender.model_validate({"secret": secret, "roles": ["operator"]})
    with pytest.raises(ValueError, match="'ops'") as refused:
        SenderRegistry({"ops": config})
    assert str(refused.value) == "gateway sender 'ops': secret is not whsec_<base64>"
    assert refused.value.__cause__ is None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_the_gateway_component_serves_its_settings_until_stopped(
    nc: Client, nats_url: str
) -> None:
    port = _free_port()
    settings = Settings(gateway_host="127.0.0.1", gateway_port=port, gateway_senders=SENDERS)
    assert SECRET not in repr(settings)
    stop = asyncio.Event()
    gateway = components()["gateway"]

    async def serve() -> None:
        await gateway(Runtime(settings, nats_url, ""), stop)

    task = asyncio.create_task(serve())
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:

            async def healthy() -> bool:
                try:
                    async with session.get(f"{base}/healthz") as response:
                        return response.status == 200
                except aiohttp.ClientConnectionError:
                    return False

            await eventually(healthy, what="the gateway answering /healthz")
            data, headers = signed(APPROVAL)
            async with session.post(base + PATH, data=data, headers=headers) as response:
                assert response.status == 202
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
    assert await count(nc, subjects.STREAM_IN, subjects.signal("support")) == 1


async def test_an_approval_through_the_gateway_moves_the_workflow_and_a_forged_one_never_arrives(
    nats_url: str, database_url: str
) -> None:
    async with projector_running(nats_url, database_url) as h:
        async with TestClient(TestServer(gateway_app(h.nc))) as test_client:
            workflow_id = await start(h)
            await to_awaiting_approval(h, workflow_id)
            path = f"/v1/workflows/support/{workflow_id}/signals"
            approval = {**APPROVAL, "workflow_id": workflow_id}
            supervisor = {**approval, "actor": {"id": "mallory", "role": "support_supervisor"}}
            forged, _, forged_headers = await post(test_client, supervisor, path)
            accepted, answer, _ = await post(test_client, approval, path)

        assert (forged, accepted) == (403, 202)
        await h.at_state(workflow_id, "EXECUTING_ACTION")
        assert (await h.decided(workflow_id, answer["event_id"]))["accepted"]
        audited = {row["event_id"] for row in (await h.view(workflow_id))["audit"]}
        assert f"gw-tickets-{forged_headers['webhook-id']}" not in audited


async def test_a_signed_body_cannot_be_replayed_against_another_workflow(
    client: Client_, nc: Client
) -> None:
    status, answer, _ = await post(client, APPROVAL, "/v1/workflows/support/wf-other/signals")

    assert (status, answer["error"]) == (400, "schema_mismatch")
    assert await count(nc, subjects.STREAM_IN, subjects.signal("support")) == 0
