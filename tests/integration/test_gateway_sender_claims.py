"""The gateway's sender, signed (the issue "Hostile input, round two", build item 1): the
projector reads which webhook sender a gateway message speaks for from a claim the gateway
signs, not from the event id. A message published as `gateway` whose event id names a sender
but carries no valid claim (what anyone holding the gateway's broker credentials could send)
is dead-lettered `sender_unsigned` and changes nothing; the same approval posted to the gateway
is signed and moves the workflow. Against real NATS JetStream, PostgreSQL and the projector."""

from __future__ import annotations

from collections.abc import Callable

import nats
import pytest
from aiohttp.test_utils import TestClient, TestServer

from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.clients import relayed_event_id
from interlock.contracts.envelope import Actor
from interlock.contracts.sender_claims import HEADER_SENDER_CLAIM
from interlock.contracts.urls import nats_inbox
from interlock.messaging import letters
from tests.support.drive import start, to_awaiting_approval
from tests.support.gateway_webhooks import APPROVAL, SENDERS, gateway_app, post
from tests.support.harness import projector_running
from tests.support.payloads import envelope
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(120)


async def test_a_gateway_message_without_the_gateways_signed_claim_is_refused(
    nats_url: str, database_url: str, identity_url: Callable[[str], str]
) -> None:
    settings = Settings(gateway_senders=SENDERS)
    async with projector_running(nats_url, database_url, settings=settings) as h:
        workflow_id = await start(h)  # tenant acme, which sender tickets may act for
        await to_awaiting_approval(h, workflow_id)
        url = identity_url("gateway")
        gateway = await nats.connect(url, inbox_prefix=nats_inbox(url))
        event_id = relayed_event_id("tickets", "msg_unsigned")
        unsigned = envelope(
            "APPROVED", workflow_id=workflow_id, tenant_id="acme", event_id=event_id
        ).model_copy(update={"actor": Actor(id="alice", role="support_approver")})
        try:
            subject = subjects.signal("support", "gateway")
            await gateway.jetstream().publish(subject, unsigned.to_bytes())
            forged = unsigned.model_copy(update={"event_id": relayed_event_id("tickets", "m2")})
            claim = {HEADER_SENDER_CLAIM: "v1.tickets.bm90LWEtc2lnbmF0dXJl"}
            await gateway.jetstream().publish(subject, forged.to_bytes(), headers=claim)
        finally:
            await gateway.close()
        js = h.nc.jetstream()

        async def refused() -> list[letters.Letter] | None:
            found = [d async for d in letters.letters(js, reason="sender_unsigned")]
            return found if len(found) == 2 else None

        dead = await eventually(refused, what="both dead-lettered sender_unsigned")
        assert {d.subject for d in dead} == {subject}
        assert all("gateway" in d.detail for d in dead)
        assert (await h.view(workflow_id))["state"] == "AWAITING_APPROVAL"
        audited = {row["event_id"] for row in (await h.view(workflow_id))["audit"]}
        assert event_id not in audited

        async with TestClient(TestServer(gateway_app(h.nc))) as test_client:
            path = f"/v1/workflows/support/{workflow_id}/signals"
            status, answer, _ = await post(
                test_client, {**APPROVAL, "workflow_id": workflow_id}, path
            )

        assert status == 202
        await h.at_state(workflow_id, "EXECUTING_ACTION")
        assert (await h.decided(workflow_id, answer["event_id"]))["accepted"]
