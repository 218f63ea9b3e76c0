"""Signed webhooks for the approval/webhook gateway, and a gateway to send them to: shared
by the gateway's integration tests.

Senders, secrets and an approval body; `signed` and `post` send a body as a Standard Webhooks
sender would; `count` and `dead_letter` read what reached JetStream.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from nats.aio.client import Client
from nats.js import JetStreamContext
from standardwebhooks.webhooks import Webhook

from interlock.config import access
from interlock.config.settings import GatewaySender, Settings
from interlock.contracts import subjects
from interlock.services.gateway import Limits, SenderRegistry, create_app, jetstream_publisher
from interlock.services.gateway.claims import ClaimSigner
from tests.support.workflows import REGISTRY


def _secret() -> str:
    return "whsec_" + base64.b64encode(os.urandom(32)).decode()


SECRET, OPS_SECRET, WRONG_SECRET = _secret(), _secret(), _secret()
SENDERS = {
    "tickets": GatewaySender.model_validate(
        {
            "secret": SECRET,
            "roles": ["support_approver"],
            "tenants": ["acme"],
            "actors": ["alice", "bob"],
        }
    ),
    "ops": GatewaySender.model_validate(
        {"secret": OPS_SECRET, "roles": ["operator"], "tenants": ["*"], "actors": ["*"]}
    ),
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


def gateway_app(nc: Client, limits: Limits | None = None) -> web.Application:
    registry = SenderRegistry(SENDERS)
    return create_app(
        jetstream_publisher(nc.jetstream()),
        registry,
        workflows=REGISTRY,
        connected=lambda: nc.is_connected,
        limits=limits or Limits(per_sender=1000.0, unauthenticated=1000.0),
        claims=installation_claims(),
    )


def installation_claims() -> ClaimSigner:
    """Signs sender claims with the installation's key, as the gateway's process does (the
    harness's projector verifies them with its public key)."""
    return ClaimSigner(access.gateway_claims_key(Settings()))


@pytest.fixture
async def gateway_client(nc: Client, js: JetStreamContext) -> AsyncIterator[Client_]:
    """A test client of the gateway publishing through `nc`, Interlock's streams provisioned.

    Test modules take it as their `client` (`client = gateway_client`).
    """
    async with TestClient(TestServer(gateway_app(nc))) as test_client:
        yield test_client
