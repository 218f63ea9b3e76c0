"""The support workflow's benchmark driver: publishes happy-path requests, approves each
as soon as its approval task appears, and times it until `completed` is announced."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import nats
from nats.aio.msg import Msg

from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import workflow_id_for
from interlock.contracts.partitions import key_of, routing_key
from interlock.ops.signals import Clients

APPROVER = Actor(id="bench-approver", role="support_approver")
REQUEST = {
    "subject": "Refund for a double charge",
    "body": "Charged twice this month.",
    "amount": "20.00",
    "currency": "EUR",
}


class Driver:
    """Publishes requests, answers approval tasks, and times completions."""

    def __init__(self, bus: Clients) -> None:
        self.bus = bus
        self.js = bus.approvals.jetstream()
        self.done: dict[str, asyncio.Future[float]] = {}
        self.subs: list[Any] = []

    async def start(self) -> None:
        for name, cb in (("approval_requested", self._approve), ("completed", self._completed)):
            self.subs.append(
                await self.js.subscribe(
                    subjects.out("support", name),
                    cb=cb,
                    ordered_consumer=True,
                    deliver_policy=nats.js.api.DeliverPolicy.NEW,
                )
            )

    async def _approve(self, msg: Msg) -> None:
        task = Envelope.model_validate_json(msg.data)
        if task.workflow_id not in self.done:
            return
        event = Envelope(
            event_id=f"bench-ok-{uuid.uuid4()}",
            type="APPROVED",
            workflow_type="support",
            workflow_id=task.workflow_id,
            tenant_id=task.tenant_id,
            actor=APPROVER,
            occurred_at=utcnow(),
            payload={
                "recommendation_version": task.payload["recommendation_version"],
                "amount": task.payload["amount"],
            },
        )
        await self.bus.approvals.jetstream().publish(
            subjects.signal("support", self.bus.approvals_name, key_of(event)),
            event.to_bytes(),
            headers={subjects.HEADER_MSG_ID: event.event_id},
        )

    async def _completed(self, msg: Msg) -> None:
        future = self.done.get(Envelope.model_validate_json(msg.data).workflow_id or "")
        if future is not None and not future.done():
            future.set_result(time.perf_counter())

    async def one(self) -> tuple[str, float]:
        event_id = f"bench-{uuid.uuid4()}"
        workflow_id = workflow_id_for("support", "bench", event_id)
        finished = self.done[workflow_id] = asyncio.get_running_loop().create_future()
        event = Envelope(
            event_id=event_id,
            type="START",
            workflow_type="support",
            tenant_id="bench",
            actor=Actor(id="bench", role="upstream"),
            occurred_at=utcnow(),
            payload={**REQUEST, "customer_id": f"bench-{event_id[-8:]}"},
        )
        started = time.perf_counter()
        await self.bus.upstream.jetstream().publish(
            subjects.request("support", self.bus.upstream_name, routing_key("bench", workflow_id)),
            event.to_bytes(),
            headers={subjects.HEADER_MSG_ID: event_id},
        )
        return workflow_id, (await finished - started) * 1000
