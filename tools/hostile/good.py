"""The good traffic of a hostile round: refund requests for the round's tenant, each approved
as soon as its approval is asked, checked to have run exactly as without any noise (the
process that sends them, and the quiet baseline, are `genuine`'s)."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime

from nats.aio.client import Client
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import workflow_id_for
from interlock.messaging.partition_streams import inbound_streams
from interlock.ops.signals import Clients
from interlock.simulators import action_count, seed_customer
from interlock.tools.demo.runner import ApprovalDesk, Run, approve

TENANT = "hostile-good"
TERMINAL = ("COMPLETED", "FAILED", "REJECTED", "CANCELLED", "MANUAL_REVIEW", "FAILED_COMPENSATED")

HAPPY = sorted(["START", "CLASSIFICATION_SUCCEEDED", "POLICY_RETRIEVED", "ACCOUNT_INSPECTED",
                "RECOMMENDATION_GENERATED", "POLICY_VALID", "APPROVED", "ACTION_EXECUTED",
                "CUSTOMER_NOTIFIED"])  # fmt: skip
"""The accepted events of a refund approved at once, as it runs without any noise."""
REQUEST = {"subject": "Double charge", "body": "Charged twice.", "amount": "20.00",
           "currency": "EUR"}  # fmt: skip


@dataclass
class Stack:
    """Where the round runs: the stack's settings, its server URL (no credentials) and
    database, the gateway's and the console's base URLs, and the password of the console
    login the attacker holds (`web.VIEWER`)."""

    settings: Settings
    server: str
    database_url: str
    gateway_url: str
    console_url: str
    viewer_password: str


@dataclass
class Good:
    """The good traffic: refund requests, each approved as soon as its approval is asked."""

    stack: Stack
    bus: Clients
    engine: AsyncEngine
    desk: ApprovalDesk
    approvers: list[asyncio.Task[None]] = field(default_factory=list)
    published: dict[str, datetime] = field(default_factory=dict)
    """When each workflow's request was published, by workflow id."""

    async def start(self) -> Run:
        customer = f"hostile-{uuid.uuid4().hex[:10]}"
        await seed_customer(self.stack.database_url, customer)
        event_id = f"good-{uuid.uuid4()}"
        run = Run("good", workflow_id_for("support", TENANT, event_id), TENANT, customer,
                  self.bus, self.engine, self.stack.database_url)  # fmt: skip
        self.desk.watch(run)
        self.published[run.workflow_id] = utcnow()
        await self.bus.publish(
            Envelope(
                event_id=event_id,
                type="START",
                workflow_type="support",
                tenant_id=TENANT,
                actor=Actor(id="good-crm", role="upstream"),
                occurred_at=utcnow(),
                payload={**REQUEST, "customer_id": customer},
            )
        )
        await asyncio.wait_for(run.wait_for(lambda view: True), 60)
        self.approvers.append(asyncio.create_task(self._approve(run)))
        return run

    @staticmethod
    async def _approve(run: Run) -> None:
        await approve(run, await run.next_task())

    async def stop(self) -> None:
        for task in self.approvers:
            task.cancel()
        await self.desk.stop()


async def settled(admin: Client, runs: list[Run], within: float = 120.0) -> None:
    """Wait until every good workflow is terminal and nothing waits in the work queues."""
    deadline = time.monotonic() + within
    js = admin.jetstream()
    while time.monotonic() < deadline:
        views = [await r.view() for r in runs]
        done = all(v is not None and v["state"] in TERMINAL for v in views)
        streams = [*await inbound_streams(js), subjects.STREAM_JOBS]
        queued = sum([(await js.stream_info(s)).state.messages for s in streams])
        if done and queued == 0:
            await asyncio.sleep(1.0)  # the last dead letters are published after the ack
            return
        await asyncio.sleep(0.2)


async def as_without_noise(stack: Stack, run: Run) -> bool:
    """Completed with the accepted events of a run without noise, and one refund."""
    view = await run.view()
    if view is None or view["state"] != "COMPLETED":
        return False
    accepted = sorted(e["event_type"] for e in view["audit"] if e["accepted"])
    refunds = await action_count(stack.database_url, customer_id=run.customer_id)
    return accepted == HAPPY and refunds == 1
