"""Drives request cases through the real stack, the way outside systems would.

An upstream publishes each case's event as a `START` envelope on
`wf.in.request.request.upstream`
(exactly the fixture's fields; the event id goes in the envelope), with `causation_id`
naming the case, so the projector's verdict on *this* publication can be told apart from
an earlier one with the same event id. An upstream that jumps ahead sends
`EXECUTE_REQUESTED` (refused, the run is then cancelled); an approver answers approval tasks from
`wf.out.request.approval_requested` with the case's approval facts; an operator resumes
runs; dead letters are watched on `wf.dlq.projector`. Nothing here decides an outcome.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import workflow_id_for
from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.tools.demo.casefile import Case

WORKFLOW_TYPE = "request"
UPSTREAM = Actor(id="fixture-upstream", role="upstream")
APPROVER = Actor(id="fixture-approver", role="request_approver")
OPERATOR = Actor(id="fixture-operator", role="operator")
TERMINAL = ("completed", "blocked", "failed", "cancelled", "compensated")
CASE_ENDED = "the case ends at its refused command"
POLL_S = 0.02
T = TypeVar("T")


@dataclass(frozen=True)
class Submission:
    """One case as published: the exact bytes, the marker naming it, its workflow id."""

    case: Case
    body: bytes
    marker: str
    workflow_id: str | None
    tenant_id: str


def submission(case: Case, tenant_id: str, run_id: str) -> Submission:
    """The `START` envelope for `case`, as bytes: the door, not we, judges its contract.

    Event ids are unique within a case file, not across runs, while the projector treats
    them as globally unique; so a valid one is scoped to the run (`<run>.<event id>`), and
    the file's own id travels as the correlation id, which is what the recorded classifier
    looks its answers up by. An invalid one is sent exactly as the file has it.
    """
    event = case.event
    payload = (
        {k: v for k, v in event.items() if k != "event_id"} if isinstance(event, dict) else event
    )
    marker = f"fixture:{run_id}:{case.id}"
    scoped = f"{run_id}.{case.event_id}" if case.event_id else None
    body = {
        "event_id": scoped or (event.get("event_id") if isinstance(event, dict) else None),
        "correlation_id": case.event_id,
        "type": "START",
        "workflow_type": WORKFLOW_TYPE,
        "tenant_id": tenant_id,
        "actor": UPSTREAM.model_dump(),
        "causation_id": marker,
        "occurred_at": utcnow().isoformat(),
        "payload": payload,
    }
    workflow_id = workflow_id_for(WORKFLOW_TYPE, tenant_id, scoped) if scoped else None
    return Submission(case, json.dumps(body).encode(), marker, workflow_id, tenant_id)


@dataclass
class Listeners:
    """Dead letters of the projector and approval tasks, collected from before the first
    publication (deliver policy NEW, so an earlier run's messages are not seen)."""

    dead_letters: list[tuple[bytes, dict[str, str]]] = field(default_factory=list)
    tasks: dict[str, asyncio.Queue[dict[str, Any]]] = field(default_factory=dict)
    _subs: list[Any] = field(default_factory=list)

    async def start(self, nc: Client) -> None:
        js = nc.jetstream()
        new = nats.js.api.DeliverPolicy.NEW
        for subject, cb in (
            (subjects.dlq("projector"), self._on_dead_letter),
            (subjects.out(WORKFLOW_TYPE, "approval_requested"), self._on_task),
        ):
            self._subs.append(
                await js.subscribe(subject, ordered_consumer=True, deliver_policy=new, cb=cb)
            )

    async def stop(self) -> None:
        for sub in self._subs:
            await sub.unsubscribe()

    def queue(self, workflow_id: str) -> asyncio.Queue[dict[str, Any]]:
        return self.tasks.setdefault(workflow_id, asyncio.Queue())

    def dead_letter_reason(self, body: bytes) -> str | None:
        """The reason the projector dead-lettered exactly these bytes, if it did."""
        for data, headers in self.dead_letters:
            if data == body and headers.get(subjects.HEADER_DLQ_SUBJECT, "").startswith(
                subjects.IN_PREFIX
            ):
                return headers.get(subjects.HEADER_DLQ_REASON, "unknown")
        return None

    async def _on_dead_letter(self, msg: Msg) -> None:
        self.dead_letters.append((msg.data, dict(msg.headers or {})))

    async def _on_task(self, msg: Msg) -> None:
        task = Envelope.model_validate_json(msg.data).payload
        self.queue(str(task.get("workflow_id"))).put_nowait(task)


async def publish(bus: Clients, sub: Submission, run_id: str) -> None:
    """Publish the case's request as the upstream client, acknowledged by JetStream before
    this returns (the exact bytes of the case, so not through `Clients.publish`)."""
    msg_id = f"{run_id}:{sub.case.id}"
    await bus.upstream.jetstream().publish(
        subjects.request(WORKFLOW_TYPE, bus.upstream_name),
        sub.body,
        headers={subjects.HEADER_MSG_ID: msg_id},
    )


async def signal(
    bus: Clients,
    sub: Submission,
    event_type: str,
    payload: dict[str, Any],
    actor: Actor,
    *,
    suffix: str,
    expected_version: int | None = None,
) -> str:
    event = Envelope(
        event_id=f"{sub.marker}:{suffix}",
        type=event_type,
        workflow_type=WORKFLOW_TYPE,
        workflow_id=sub.workflow_id,
        tenant_id=sub.tenant_id,
        actor=actor,
        causation_id=sub.marker,
        occurred_at=utcnow(),
        expected_version=expected_version,
        payload=payload,
    )
    await bus.publish(event)
    return event.event_id


async def door_row(engine: AsyncEngine, sub: Submission) -> dict[str, Any] | None:
    """The audit row the projector wrote for this publication, if any yet."""
    if sub.workflow_id is None:
        return None
    return await queries.start_decision(engine, sub.workflow_id, sub.marker)


async def poll(probe: Callable[[], Awaitable[T | None]]) -> T:
    """The first non-None result of `probe` (the caller bounds the wait)."""
    while True:
        found = await probe()
        if found is not None:
            return found
        await asyncio.sleep(POLL_S)


async def state_in(
    engine: AsyncEngine, workflow_id: str, states: tuple[str, ...]
) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        view = await queries.workflow_view(engine, workflow_id)
        return view if view is not None and view["state"] in states else None

    return await poll(probe)


async def answer_approval(bus: Clients, listeners: Listeners, sub: Submission) -> None:
    """Give the case's approval when the workflow asks for one (never unasked)."""
    assert sub.case.approval is not None
    assert sub.workflow_id is not None
    task = await listeners.queue(sub.workflow_id).get()
    await signal(
        bus,
        sub,
        "APPROVED",
        sub.case.approval.model_dump(),
        APPROVER,
        suffix="approval",
        expected_version=int(task["state_version"]),
    )


async def jump_to_execution(bus: Clients, engine: AsyncEngine, sub: Submission) -> None:
    """As an operator, command the run to execute before it was authorised, and wait for
    the projector's decision. (A signal's actor role must be one its client may sign for:
    the approvals client signs for approvers and operators, never for an upstream.)

    Request v3 refuses the command without touching the run (v1/v2 failed the run): the
    refusal is the case's outcome, and the operator then cancels the run before it does
    anything, as the case file's runner drops the record whose transition it refused."""
    assert sub.workflow_id is not None
    event_id = await signal(bus, sub, "EXECUTE_REQUESTED", {}, OPERATOR, suffix="execute")
    workflow_id = sub.workflow_id
    decision = await poll(lambda: queries.decision_for(engine, workflow_id, event_id))
    if decision["accepted"]:
        return
    reason = {"reason": CASE_ENDED}
    cancel_id = await signal(bus, sub, "CANCEL_REQUESTED", reason, OPERATOR, suffix="cancel")
    await poll(lambda: queries.decision_for(engine, workflow_id, cancel_id))


async def resume(bus: Clients, engine: AsyncEngine, sub: Submission) -> None:
    """Once the classification is committed (the checkpoint), resume the run as an operator
    and wait for the projector's decision. A run that ended before it could be resumed is
    left alone."""
    assert sub.workflow_id is not None
    view = await state_in(engine, sub.workflow_id, ("classified", *TERMINAL))
    if view["state"] != "classified":
        return
    event_id = await signal(
        bus, sub, "RESUME", {}, OPERATOR, suffix="resume", expected_version=view["version"]
    )
    workflow_id = sub.workflow_id
    await poll(lambda: queries.decision_for(engine, workflow_id, event_id))
