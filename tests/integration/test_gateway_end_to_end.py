"""The approval/webhook gateway end to end: the `gateway` component serving its settings
until stopped, and an approval through the gateway moving a running workflow while a forged
one never reaches it — against real NATS JetStream and PostgreSQL."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from nats.aio.client import Client

from interlock.app.embedded._process import free_port
from interlock.app.runners import components
from interlock.app.runtime import Runtime
from interlock.config.settings import Settings
from interlock.contracts import subjects
from tests.support.drive import start, to_awaiting_approval
from tests.support.gateway_webhooks import (
    APPROVAL,
    PATH,
    SECRET,
    SENDERS,
    count,
    gateway_app,
    post,
    signed,
)
from tests.support.harness import projector_running
from tests.support.polling import eventually
from tests.support.routing import sent


@pytest.mark.usefixtures("js")  # the gateway publishes into provisioned streams
async def test_the_gateway_component_serves_its_settings_until_stopped(
    nc: Client, nats_url: str
) -> None:
    port = free_port()
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
    assert await count(nc, subjects.STREAM_IN, sent(subjects.SIGNAL, "support", "gateway")) == 1


async def test_an_approval_through_the_gateway_moves_the_workflow_and_a_forged_one_never_arrives(
    nats_url: str, database_url: str
) -> None:
    settings = Settings(gateway_senders=SENDERS)
    async with projector_running(nats_url, database_url, settings=settings) as h:
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
