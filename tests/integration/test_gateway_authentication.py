"""The approval/webhook gateway's authentication, against a real NATS JetStream: only a
known sender's valid, fresh signature over a body naming the addressed workflow, claiming a
role that sender may grant, is published — every refusal answered, recorded on
`wf.dlq.gateway` without secrets, and never published; a malformed secret stops the gateway."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from nats.aio.client import Client

from interlock.config.settings import GatewaySender
from interlock.contracts import subjects
from interlock.services.gateway import SenderRegistry
from tests.support.gateway_webhooks import (
    APPROVAL,
    SECRET,
    WRONG_SECRET,
    Client_,
    count,
    dead_letter,
    gateway_client,
    post,
)

# The `client` these tests take: a test client of the gateway, streams provisioned.
client = gateway_client


async def test_a_bad_signature_is_refused_recorded_and_never_published(
    client: Client_, nc: Client
) -> None:
    status, answer, headers = await post(client, secret=WRONG_SECRET)

    assert (status, answer["error"]) == (401, "bad_signature")
    letter = await dead_letter(nc)
    letter_headers = letter.headers or {}
    assert letter_headers[subjects.HEADER_DLQ_REASON] == "bad_signature"
    assert letter_headers[subjects.HEADER_DLQ_SUBJECT] == subjects.signal("support", "gateway")
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


@pytest.mark.parametrize("secret", ["whsec_", "whsec_not*base64!", ""])
def test_a_malformed_secret_stops_the_gateway_at_start_without_echoing_it(secret: str) -> None:
    config = GatewaySender.model_validate(
        {"secret": secret, "roles": ["operator"], "tenants": ["acme"], "actors": ["*"]}
    )
    with pytest.raises(ValueError, match="'ops'") as refused:
        SenderRegistry({"ops": config})
    assert str(refused.value) == "gateway sender 'ops': secret is not whsec_<base64>"
    assert refused.value.__cause__ is None


async def test_a_signed_body_cannot_be_replayed_against_another_workflow(
    client: Client_, nc: Client
) -> None:
    status, answer, _ = await post(client, APPROVAL, "/v1/workflows/support/wf-other/signals")

    assert (status, answer["error"]) == (400, "schema_mismatch")
    assert await count(nc, subjects.STREAM_IN, ">") == 0
