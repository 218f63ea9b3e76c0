"""The gateway binds each webhook sender to its tenants, actor roles and actor ids by
configuration: a signed body cannot name another tenant or impersonate another actor. Senders
are rate-limited, and so is unauthenticated traffic, whose refusals are then no longer
recorded one by one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer
from nats.aio.client import Client
from nats.js import JetStreamContext

from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.envelope import parse_envelope
from interlock.services.gateway import Limits
from tests.support.gateway_webhooks import (
    APPROVAL,
    WRONG_SECRET,
    Client_,
    count,
    dead_letter,
    gateway_app,
    gateway_client,
    post,
)
from tests.support.routing import sent

# The `client` these tests take: a test client of the gateway, streams provisioned.
client = gateway_client
SIGNALS = sent(subjects.SIGNAL, "support", "gateway")


async def test_a_sender_may_not_act_for_a_tenant_it_is_not_configured_for(
    client: Client_, nc: Client
) -> None:
    status, answer, _ = await post(client, {**APPROVAL, "tenant_id": "globex"})

    assert (status, answer["error"]) == (403, "forged_tenant")
    assert (await dead_letter(nc)).headers[subjects.HEADER_DLQ_REASON] == "forged_tenant"
    assert await count(nc, subjects.STREAM_IN, ">") == 0


async def test_the_tenant_comes_from_the_senders_configuration(client: Client_, nc: Client) -> None:
    body = {k: v for k, v in APPROVAL.items() if k != "tenant_id"}

    status, _, _ = await post(client, body)

    assert status == 202
    message = await nc.jetstream().get_last_msg(subjects.STREAM_IN, SIGNALS)
    assert parse_envelope(message.data or b"").tenant_id == "acme"


async def test_a_sender_may_not_sign_as_an_actor_it_is_not_configured_for(
    client: Client_, nc: Client
) -> None:
    cfo = {**APPROVAL, "actor": {"id": "cfo-globex", "role": "support_approver"}}

    status, answer, _ = await post(client, cfo)

    assert (status, answer["error"]) == (403, "forged_actor")
    assert await count(nc, subjects.STREAM_IN, ">") == 0


@pytest.fixture
async def limited(nc: Client, js: JetStreamContext) -> AsyncIterator[Client_]:
    """A gateway allowing each sender 5 requests a second, and unauthenticated traffic 3."""
    app = gateway_app(nc, Limits(per_sender=5.0, unauthenticated=3.0))
    async with TestClient(TestServer(app)) as test_client:
        yield test_client


async def test_a_sender_over_its_rate_is_refused_and_the_rest_are_not_recorded(
    limited: Client_, nc: Client
) -> None:
    answers = await asyncio.gather(*(post(limited, APPROVAL) for _ in range(20)))

    statuses = sorted(status for status, _, _ in answers)
    assert statuses.count(202) <= 6
    assert statuses.count(429) >= 14
    assert await count(nc, subjects.STREAM_IN, SIGNALS) == statuses.count(202)
    assert await count(nc, subjects.STREAM_DLQ, subjects.dlq("gateway")) == 0


async def test_unauthenticated_traffic_is_rate_limited_and_its_refusals_recorded_boundedly(
    limited: Client_, nc: Client
) -> None:
    answers = await asyncio.gather(*(post(limited, secret=WRONG_SECRET) for _ in range(30)))

    statuses = [status for status, _, _ in answers]
    assert set(statuses) == {401, 429}
    assert statuses.count(429) >= 25
    assert await count(nc, subjects.STREAM_DLQ, subjects.dlq("gateway")) == statuses.count(401)
    status, _, _ = await post(limited, APPROVAL)  # a sender's own budget is untouched
    assert status == 202


def test_the_gateway_listens_on_the_loopback_interface_by_default() -> None:
    assert Settings().gateway_host == "127.0.0.1"
