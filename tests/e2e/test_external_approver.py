"""The public contract from outside: an upstream system and a human-approval tool that know
only NATS subjects and JSON (plain nats-py, nothing from Interlock's packages) drive a
workflow to the end."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from interlock.config.settings import Settings
from tests.support.inprocess import stack_in_process
from tests.support.payloads import REQUEST, external_body

pytestmark = pytest.mark.timeout(180)


async def _publish(nc: Client, subject: str, body: bytes) -> None:
    await nc.jetstream().publish(
        subject, body, headers={"Nats-Msg-Id": json.loads(body)["event_id"]}
    )


async def _next_for(sub: Any, workflow_id: str) -> dict[str, Any]:
    """The next announcement about `workflow_id` on an ordered consumer."""
    while True:
        msg = await sub.next_msg(timeout=60)
        event = json.loads(msg.data)
        if event["workflow_id"] == workflow_id:
            return dict(event)


async def _approver(nc: Client, workflow_id: str, seen: list[dict[str, Any]]) -> None:
    """Reads the approval request and approves exactly what it was shown."""
    sub = await nc.jetstream().subscribe("wf.out.support.approval_requested", ordered_consumer=True)
    request = await _next_for(sub, workflow_id)
    seen.append(request)
    decision = {
        "recommendation_version": request["payload"]["recommendation_version"],
        "amount": request["payload"]["amount"],
    }
    approver = {"id": "alice", "role": "support_approver"}
    await _publish(
        nc,
        "wf.in.signal.support.approvals",
        external_body("APPROVED", workflow_id, approver, decision),
    )
    await sub.unsubscribe()


async def test_a_plain_nats_client_requests_approves_and_sees_completion(
    e2e_settings: Settings, module_nats: str, module_database: str
) -> None:
    workflow_id = f"ticket-{uuid.uuid4()}"
    async with stack_in_process(e2e_settings, module_nats, module_database, "support"):
        nc = await nats.connect(module_nats)
        try:
            js = nc.jetstream()
            completed = await js.subscribe("wf.out.support.completed", ordered_consumer=True)
            seen: list[dict[str, Any]] = []
            approving = asyncio.create_task(_approver(nc, workflow_id, seen))
            upstream = {"id": "crm", "role": "upstream"}
            start = external_body("START", workflow_id, upstream, REQUEST)
            await _publish(nc, "wf.in.request.support.upstream", start)
            done = await _next_for(completed, workflow_id)
            await approving
        finally:
            await nc.close()

    (request,) = seen
    assert request["type"] == "APPROVAL_REQUESTED"
    assert request["payload"]["amount"] == "20.00"
    assert request["payload"]["expires_at"]
    assert request["payload"]["state"] == "AWAITING_APPROVAL"
    assert done["type"] == "COMPLETED"
    assert done["payload"]["action"]["status"] == "succeeded"
    assert done["payload"]["action"]["amount"] == "20.00"
    assert done["payload"]["state_version"] > request["payload"]["state_version"]
    # One correlation from the upstream request through the approval to the outcome.
    correlation = json.loads(start)["event_id"]
    assert request["correlation_id"] == done["correlation_id"] == correlation
