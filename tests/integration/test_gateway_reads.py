"""`GET /v1/workflows/{type}/{id}`: a sender asks what became of a workflow and of its webhook
(accepted, refused with the projector's reason, or not decided yet), authenticated as a
webhook, reading through the gateway's own database role, against real NATS JetStream and
PostgreSQL; another tenant's workflow is as unknown as a workflow that does not exist."""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from nats.aio.client import Client
from yarl import URL

from interlock.config.access import DATABASE_ROLES, with_credentials
from interlock.config.components import database_access
from interlock.config.secrets import Secrets
from interlock.config.settings import GatewaySender, Settings
from interlock.projector.store.roles import GATEWAY_ROLE, provision_roles
from interlock.projector.store.status import StatusReader
from interlock.services.gateway import Limits, SenderRegistry, create_app, jetstream_publisher
from interlock.services.gateway.reads import signed_content
from tests.support.drive import start, to_awaiting_approval
from tests.support.gateway_webhooks import (
    APPROVAL,
    SECRET,
    SENDERS,
    Client_,
    installation_claims,
    post,
    signed,
)
from tests.support.harness import Harness, projector_running
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(90)

GLOBEX_SECRET = "whsec_" + base64.b64encode(os.urandom(32)).decode()
DESK_SECRET = "whsec_" + base64.b64encode(os.urandom(32)).decode()
READERS = {
    **SENDERS,
    "desk": GatewaySender.model_validate(
        {
            "secret": DESK_SECRET,
            "roles": ["support_approver"],
            "tenants": ["acme"],
            "actors": ["*"],
            "types": ["request"],
        }
    ),
    "globex": GatewaySender.model_validate(
        {
            "secret": GLOBEX_SECRET,
            "roles": ["support_approver"],
            "tenants": ["globex"],
            "actors": ["*"],
        }
    ),
}


@pytest.fixture
async def gateway_url(database_url: str, session_secrets: Secrets) -> str:
    """The gateway role's URL on the test's database, as `interlock migrate` sets it up."""
    passwords = session_secrets.postgres_passwords(list(DATABASE_ROLES))
    await provision_roles(database_url, passwords, database_access())
    return with_credentials(database_url, GATEWAY_ROLE, passwords[GATEWAY_ROLE])


def _app(nc: Client, reader: StatusReader, limits: Limits | None = None) -> web.Application:
    return create_app(
        jetstream_publisher(nc.jetstream()),
        SenderRegistry(READERS),
        workflows=REGISTRY,
        connected=lambda: nc.is_connected,
        limits=limits or Limits(per_sender=1000.0, unauthenticated=1000.0),
        read_status=reader,
        claims=installation_claims(),
    )


@pytest.fixture
async def reader(gateway_url: str) -> AsyncIterator[StatusReader]:
    found = StatusReader(gateway_url)
    yield found
    await found.close()


async def _get(
    client: Client_, path: str, *, sender: str = "tickets", secret: str | None = None, **query: str
) -> tuple[int, Any]:
    target = str(URL(path).with_query(query)) if query else path
    _, headers = signed(signed_content("GET", target), sender=sender, secret=secret or SECRET)
    response = await client.get(target, headers=headers)
    return response.status, await response.json()


async def _awaiting_approval(h: Harness) -> tuple[str, str]:
    workflow_id = await start(h)
    await to_awaiting_approval(h, workflow_id)
    return workflow_id, f"/v1/workflows/support/{workflow_id}"


@pytest.fixture
async def awaiting(
    nats_url: str, database_url: str, reader: StatusReader
) -> AsyncIterator[tuple[Client_, str, str]]:
    """A projector running, a support workflow awaiting approval, and a gateway reading it."""
    async with (
        projector_running(nats_url, database_url, settings=Settings(gateway_senders=SENDERS)) as h,
        TestClient(TestServer(_app(h.nc, reader))) as client,
    ):
        workflow_id, path = await _awaiting_approval(h)
        yield client, workflow_id, path


async def _decided(client: Client_, path: str, event_id: str) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        status, body = await _get(client, path, event_id=event_id)
        assert status == 200, body
        return body if body["event"]["decision"] != "pending" else None

    return await eventually(probe, what=f"a decision on {event_id} over HTTP")


async def test_a_sender_reads_the_state_and_the_decision_accepted_or_refused_with_its_reason(
    awaiting: tuple[Client_, str, str],
) -> None:
    client, workflow_id, path = awaiting
    approval = {**APPROVAL, "workflow_id": workflow_id}
    stale = {**approval, "payload": {**approval["payload"], "recommendation_version": 7}}
    status, refused_event, _ = await post(client, stale, f"{path}/signals")
    assert status == 202
    refused = await _decided(client, path, refused_event["event_id"])
    status, accepted_event, _ = await post(client, approval, f"{path}/signals")
    assert status == 202
    accepted = await _decided(client, path, accepted_event["event_id"])

    assert refused["event"]["decision"] == "refused"
    assert refused["event"]["reason"] == "guard_rejected"
    assert refused["event"]["failed_guards"] == ["version_current"]
    assert accepted["event"] == {
        "event_id": accepted_event["event_id"],
        "decision": "accepted",
        "reason": None,
        "detail": None,
        "failed_guards": [],
    }
    assert (accepted["workflow_id"], accepted["tenant_id"]) == (workflow_id, "acme")
    assert accepted["state"] != "AWAITING_APPROVAL"
    assert accepted["version"] > refused["version"]
    assert datetime.fromisoformat(accepted["updated_at"]).utcoffset() is not None
    assert set(accepted) == {
        "workflow_type",
        "workflow_id",
        "tenant_id",
        "state",
        "version",
        "updated_at",
        "event",
    }


async def test_a_webhook_is_pending_until_a_projector_decides_it(
    nats_url: str, database_url: str, reader: StatusReader, nc: Client
) -> None:
    settings = Settings(gateway_senders=SENDERS)
    async with projector_running(nats_url, database_url, settings=settings) as h:
        workflow_id, path = await _awaiting_approval(h)
    async with TestClient(TestServer(_app(nc, reader))) as client:
        status, sent, _ = await post(
            client, {**APPROVAL, "workflow_id": workflow_id}, f"{path}/signals"
        )
        assert status == 202
        status, pending = await _get(client, path, event_id=sent["event_id"])
        assert status == 200
        assert pending["event"]["decision"] == "pending"
        assert pending["state"] == "AWAITING_APPROVAL"
        async with projector_running(nats_url, database_url, settings=settings):
            decided = await _decided(client, path, sent["event_id"])
    assert decided["event"]["decision"] == "accepted"


async def test_unauthenticated_is_401_and_another_tenant_or_no_workflow_is_the_same_404(
    awaiting: tuple[Client_, str, str],
) -> None:
    client, workflow_id, path = awaiting
    unsigned = await client.get(path)
    wrong = await _get(client, path, secret=GLOBEX_SECRET)
    own = await _get(client, path)
    other_tenant = await _get(client, path, sender="globex", secret=GLOBEX_SECRET)
    claimed = await _get(client, path, tenant_id="globex")
    missing = await _get(client, "/v1/workflows/support/wf-nowhere")
    bad_type = await _get(client, f"/v1/workflows/suport/{workflow_id}")
    # A webhook for a workflow that does not exist is stored (202), never decided on one.
    lost = {**APPROVAL, "workflow_id": "wf-nowhere"}
    status, sent, _ = await post(client, lost, "/v1/workflows/support/wf-nowhere/signals")
    asked = await _get(client, "/v1/workflows/support/wf-nowhere", event_id=sent["event_id"])
    others = await _get(client, path, event_id="gw-ops-msg_1")

    assert unsigned.status == 401
    assert wrong[0] == 401
    assert (own[0], own[1]["state"]) == (200, "AWAITING_APPROVAL")
    assert "event" not in own[1]
    unknown = (404, {"error": "unknown_workflow", "detail": "no such workflow for this sender"})
    assert other_tenant == claimed == missing == bad_type == asked == unknown
    assert status == 202
    assert others[0] == 404


async def test_a_reads_signature_covers_method_path_and_query_so_captured_headers_read_nothing_else(
    awaiting: tuple[Client_, str, str],
) -> None:
    """Headers captured from one read (signed over an empty body, as before) answer no
    other path or query: the signed content is `GET <path>?<query>` as sent."""
    client, _, path = awaiting
    target = f"{path}?tenant_id=acme"
    _, captured = signed(signed_content("GET", target))
    _, over_empty_body = signed(b"")

    own = await client.get(target, headers=captured)
    other_query = await client.get(f"{path}?tenant_id=acme&event_id=gw-tickets-x", headers=captured)
    other_path = await client.get("/v1/workflows/support/wf-other?tenant_id=acme", headers=captured)
    empty_body = await client.get(path, headers=over_empty_body)

    assert own.status == 200
    assert [r.status for r in (other_query, other_path, empty_body)] == [401, 401, 401]
    assert (await other_query.json())["error"] == "bad_signature"


async def test_reads_share_the_senders_rate_limit(
    nats_url: str, database_url: str, reader: StatusReader, nc: Client
) -> None:
    async with projector_running(
        nats_url, database_url, settings=Settings(gateway_senders=SENDERS)
    ) as h:
        _, path = await _awaiting_approval(h)
    app = _app(nc, reader, Limits(per_sender=2.0, unauthenticated=1000.0))
    async with TestClient(TestServer(app)) as client:
        statuses = [(await _get(client, path))[0] for _ in range(4)]
    assert statuses[0] == 200
    assert statuses[-1] == 429


async def test_a_workflow_started_over_http_is_read_with_the_event_id_its_start_returned(
    awaiting: tuple[Client_, str, str],
) -> None:
    client, _, _ = awaiting
    request = {
        "customer_id": "c-2",
        "subject": "Refund for a double charge",
        "body": "Charged twice.",
        "amount": "20.00",
        "currency": "EUR",
    }
    status, started, _ = await post(client, {"payload": request}, "/v1/workflows/support")
    assert status == 202
    path = f"/v1/workflows/support/{started['workflow_id']}"

    async def probe() -> dict[str, Any] | None:
        status, body = await _get(client, path, event_id=started["event_id"])
        return body if status == 200 and body["event"]["decision"] != "pending" else None

    read = await eventually(probe, what="the started workflow's decision over HTTP")
    assert read["event"]["decision"] == "accepted"
    assert read["tenant_id"] == "acme"


async def test_a_sender_reads_no_workflow_of_a_type_it_is_not_configured_for(
    awaiting: tuple[Client_, str, str],
) -> None:
    client, _, path = awaiting

    status, body = await _get(client, path, sender="desk", secret=DESK_SECRET)

    assert (status, body["error"]) == (404, "unknown_workflow")


async def test_a_read_naming_a_nul_or_an_overlong_id_is_404_not_a_server_error(
    awaiting: tuple[Client_, str, str],
) -> None:
    """Ids no workflow or event can have (a NUL, which the database refuses in text; over
    200 characters) are answered as unknown, never asked of the database."""
    client, _, path = awaiting

    reads = [
        await _get(client, path, event_id="gw-tickets-\x00"),
        await _get(client, path, event_id="gw-tickets-" + "x" * 300),
        await _get(client, "/v1/workflows/support/wf%00x"),
        await _get(client, f"/v1/workflows/support/{'w' * 300}"),
    ]

    assert [status for status, _ in reads] == [404] * len(reads)
    assert [body["error"] for _, body in reads] == ["unknown_event"] * 2 + ["unknown_workflow"] * 2
    assert (await _get(client, path))[0] == 200
