"""Ids nobody else can spend: a client that read a workflow's approval task can derive the
event id of its coming refund result (tenant, workflow id, state version, stage) and publish
junk under it first. The inbound stream deduplicates by `Nats-Msg-Id` across every subject,
so under that id the real result was dropped and the paid refund stayed in EXECUTING_ACTION.
Results travel under ids the projector seals into the signed job: the refund completes, and
the squat is dead-lettered `reserved_message_id` with its sender named."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import nats
import pytest
from nats.aio.client import Client

from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.ids import job_id_for, result_event_id
from interlock.contracts.urls import nats_inbox
from tests.support.inprocess import stack_in_process
from tests.support.payloads import REQUEST, external_body
from tests.support.polling import eventually
from tests.support.streams import messages_of

pytestmark = pytest.mark.timeout(180)


async def _publish(nc: Client, subject: str, body: bytes, msg_id: str | None = None) -> bool:
    """Publish; True if the stream stored it (False: dropped as a duplicate)."""
    msg_id = msg_id or json.loads(body)["event_id"]
    ack = await nc.jetstream().publish(subject, body, headers={"Nats-Msg-Id": msg_id})
    return not ack.duplicate


async def _next_for(sub: Any, workflow_id: str) -> dict[str, Any]:
    while True:
        event = json.loads((await sub.next_msg(timeout=60)).data)
        if event["workflow_id"] == workflow_id:
            return dict(event)


async def _squats(admin: Client) -> list[dict[str, str]]:
    letters = await messages_of(admin.jetstream(), subjects.STREAM_DLQ)
    return [
        dict(m.headers or {})
        for m in letters
        if (m.headers or {}).get(subjects.HEADER_DLQ_REASON) == "reserved_message_id"
    ]


async def test_a_result_id_spent_by_a_client_does_not_stall_the_refund(
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
    identity_url: Callable[[str], str],
) -> None:
    workflow_id = f"ticket-{uuid.uuid4()}"
    async with stack_in_process(e2e_settings, module_nats, module_database, "support"):
        admin = await nats.connect(module_nats)
        attacker_url = identity_url("upstream")
        attacker = await nats.connect(attacker_url, inbox_prefix=nats_inbox(attacker_url))
        try:
            js = admin.jetstream()
            tasks = await js.subscribe("wf.out.support.approval_requested", ordered_consumer=True)
            done = await js.subscribe("wf.out.support.completed", ordered_consumer=True)
            start = external_body("START", workflow_id, {"id": "crm", "role": "upstream"}, REQUEST)
            await _publish(admin, subjects.request("support", "upstream"), start)
            task = (await _next_for(tasks, workflow_id))["payload"]

            # Everything the attacker needs is in the task: junk under the result id of the
            # refund job at each of the next few versions, on its own request subject.
            version = int(task["state_version"])
            spent = [
                result_event_id(job_id_for("acme", workflow_id, v, "execute_action"))
                for v in range(version + 1, version + 4)
            ]
            for msg_id in spent:
                stored = await _publish(
                    attacker, subjects.request("support", "upstream"), b"junk", msg_id
                )
                assert stored

            approval = {"recommendation_version": task["recommendation_version"]}
            approval["amount"] = task["amount"]
            approver = {"id": "alice", "role": "support_approver"}
            signal = external_body("APPROVED", workflow_id, approver, approval)
            await _publish(admin, subjects.signal("support", "approvals"), signal)
            completed = await _next_for(done, workflow_id)

            squats = await eventually(lambda: _squats(admin), within=30, what="squats recorded")
        finally:
            await attacker.close()
            await admin.close()

    assert completed["payload"]["action"]["status"] == "succeeded"
    details = [s[subjects.HEADER_DLQ_DETAIL] for s in squats]
    assert len(details) == len(spent)
    assert all(
        d.startswith("upstream sent a request under the message id of a stage result")
        for d in details
    )
    assert all(s[subjects.HEADER_DLQ_SUBJECT] == "wf.in.request.support.upstream" for s in squats)
