"""Drives scenarios through the real stack, the way outside systems would.

Requests go in on `wf.in.request.support.upstream` as client `upstream`; an approver agent
(client `approvals`) listens on `wf.out.support.approval_requested` and answers each task from
the message alone (plain envelopes on `wf.in.signal.support.approvals`); outcomes are read
back from the projector's store.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import workflow_id_for
from interlock.ops import queries
from interlock.ops.signals import Clients

APPROVER = Actor(id="demo-approver", role="support_approver")
OPERATOR = Actor(id="demo-operator", role="operator")


@dataclass
class Run:
    """One scenario's live handle: its workflow, and ways to poke and observe it."""

    name: str
    workflow_id: str
    tenant_id: str
    customer_id: str
    bus: Clients
    engine: AsyncEngine
    sim_dsn: str
    tasks: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    state: str = "PUBLISHED"
    trace_headers: dict[str, str] = field(default_factory=dict)
    """Context of the latest approval task: answering it continues that trace."""

    async def view(self) -> dict[str, Any] | None:
        return await queries.workflow_view(self.engine, self.workflow_id)

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Poll the workflow until `predicate(view)` holds (the caller bounds the wait)."""
        while True:
            view = await self.view()
            if view is not None:
                self.state = view["state"]
                if predicate(view):
                    return view
            await asyncio.sleep(0.05)

    async def wait_state(self, *states: str) -> dict[str, Any]:
        return await self.wait_for(lambda v: v["state"] in states)

    async def next_task(self) -> dict[str, Any]:
        """The next approval task published for this workflow."""
        return await self.tasks.get()

    async def signal(
        self, event_type: str, payload: dict[str, Any], actor: Actor = APPROVER
    ) -> str:
        event = Envelope(
            event_id=f"demo-sig-{uuid.uuid4()}",
            type=event_type,
            workflow_type="support",
            workflow_id=self.workflow_id,
            tenant_id=self.tenant_id,
            actor=actor,
            occurred_at=utcnow(),
            payload=payload,
        )
        await self.bus.publish(event, self.trace_headers or None)
        return event.event_id

    async def decision(self, event_id: str) -> dict[str, Any]:
        """The projector's recorded decision on `event_id` (the caller bounds the wait)."""
        while True:
            found = await queries.decision_for(self.engine, self.workflow_id, event_id)
            if found is not None:
                return found
            await asyncio.sleep(0.05)


async def start_request(
    run: Run, payload: dict[str, Any], before_publish: Callable[[Run], None] | None = None
) -> None:
    """Publish the scenario's request; `before_publish` sees the run once its id is known."""
    event_id = f"demo-req-{uuid.uuid4()}"
    run.workflow_id = workflow_id_for("support", run.tenant_id, event_id)
    if before_publish is not None:
        before_publish(run)
    event = Envelope(
        event_id=event_id,
        type="START",
        workflow_type="support",
        tenant_id=run.tenant_id,
        actor=Actor(id="demo-crm", role="upstream"),
        occurred_at=utcnow(),
        payload={**payload, "customer_id": run.customer_id},
    )
    await run.bus.publish(event)


class ApprovalDesk:
    """Routes approval tasks from `wf.out.support.approval_requested` to their scenario."""

    def __init__(self, nc: Client) -> None:
        self._nc = nc
        self._runs: dict[str, Run] = {}
        self._sub: Any = None

    def watch(self, run: Run) -> None:
        self._runs[run.workflow_id] = run

    async def start(self) -> None:
        js = self._nc.jetstream()
        self._sub = await js.subscribe(
            subjects.out("support", "approval_requested"),
            ordered_consumer=True,
            deliver_policy=nats.js.api.DeliverPolicy.NEW,
            cb=self._on_task,
        )

    async def _on_task(self, msg: Msg) -> None:
        task = Envelope.model_validate_json(msg.data).payload
        run = self._runs.get(str(task.get("workflow_id")))
        if run is not None:
            run.trace_headers = dict(msg.headers or {})
            await run.tasks.put(task)

    async def stop(self) -> None:
        if self._sub is not None:
            await self._sub.unsubscribe()


Script = Callable[[Run], Awaitable[None]]


async def approve(run: Run, task: dict[str, Any]) -> str:
    return await run.signal(
        "APPROVED",
        {"recommendation_version": task["recommendation_version"], "amount": task["amount"]},
    )
