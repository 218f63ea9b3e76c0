"""The workloads `interlock chaos` drives: workflows of every installed type with a mix of
scenarios, answered the way outside systems would — through the broker, never the database.

Every publication waits out a broker that is down (the chaos schedule restarts it) and is
retried under the same message id and event id until the broker acknowledges it, so a lost
acknowledgement never makes a second workflow. Approvals, rejections and cancellations are
sent once the projector's state shows the workflow waiting for them (read from the database,
which is also waited out).
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from nats.aio.client import Client
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import workflow_id_for
from interlock.contracts.partitions import key_of, routing_key
from interlock.ops import queries
from interlock.ops.signals import Clients, approval_payload, signal_envelope
from interlock.simulators import seed_customer
from interlock.tools.demo import casedrive
from interlock.tools.demo.casefile import Case
from interlock.tools.demo.scenarios import REQUEST

log = logging.getLogger("interlock.chaos")
T = TypeVar("T")
TENANT = "chaos"
UPSTREAM = Actor(id="chaos-upstream", role="upstream")
APPROVER = Actor(id="chaos-approver", role="support_approver")
OPERATOR = Actor(id="chaos-operator", role="operator")


@dataclass(frozen=True)
class Scenario:
    name: str
    workflow_type: str
    answer: str | None = None
    """`approve`, `reject` or `cancel` once the workflow waits for approval."""
    faults: dict[str, list[str]] = field(default_factory=dict)
    case: str | None = None
    """For `request`: the shipped case it replays."""
    weight: int = 1


SCENARIOS = (
    Scenario("approve", "support", "approve", weight=6),
    Scenario("reject", "support", "reject", weight=2),
    Scenario("cancel", "support", "cancel", weight=2),
    Scenario("retry_inspect", "support", "approve", {"inspect": ["timeout", "ok"]}),
    Scenario("lost_response", "support", "approve", {"execute": ["lose_response"]}),
    Scenario("mismatch", "support", "approve", {"execute": ["mismatch"]}),
    Scenario("refuse", "support", "approve", {"execute": ["refuse"]}),
    Scenario("notify_fails", "support", "approve", {"notify": ["fail"]}),
    Scenario("request_normal", "request", case="case-01", weight=3),
    Scenario("request_approval", "request", "approve", case="case-07", weight=2),
    Scenario("request_blocked", "request", case="case-06"),
    Scenario("request_retry", "request", case="case-04"),
)


@dataclass
class Workload:
    """One workflow the driver runs, and what it has sent so far."""

    number: int
    scenario: Scenario
    workflow_id: str = ""
    start: bytes = b""
    start_id: str = ""
    started: bool = False
    answered: bool = False
    sent: list[tuple[str, bytes, str]] = field(default_factory=list)
    """(subject, body, message id) of everything published, for duplicate deliveries."""


def workloads(rng: random.Random, count: int, types: list[str]) -> list[Workload]:
    """`count` workloads over the installed types, scenarios drawn by weight."""
    offered = [s for s in SCENARIOS if s.workflow_type in types]
    weights = [s.weight for s in offered]
    return [Workload(i, rng.choices(offered, weights)[0]) for i in range(count)]


async def persist(attempt: Callable[[], Awaitable[T]], what: str) -> T:
    """`attempt()` until it succeeds: the broker or the database may be restarting."""
    delay = 0.2
    while True:
        try:
            return await attempt()
        except Exception as exc:
            log.debug("%s: %r; trying again", what, exc)
        await asyncio.sleep(delay)
        delay = min(2.0, delay * 1.5)


class Driver:
    def __init__(
        self,
        bus: Clients,
        admin: Client,
        *,
        engine: AsyncEngine,
        database_url: str,
        cases: dict[str, Case],
        run: str,
    ) -> None:
        """`bus`: the installation's clients, as outside systems publish; `admin`: what
        re-delivers a message as the broker or a relay would (duplicates)."""
        self._bus = bus
        self._admin = admin
        self.engine = engine
        self._dsn = database_url
        self._cases = cases
        self._run = run

    async def start(self, w: Workload) -> None:
        """Prepare and publish the workflow's request, acknowledged before this returns."""
        if w.scenario.workflow_type == "request":
            case = self._cases[w.scenario.case or ""]
            sub = casedrive.submission(case, TENANT, f"{self._run}-{w.number}")
            w.workflow_id, w.start = sub.workflow_id or "", sub.body
            w.start_id = f"{self._run}-{w.number}"
        else:
            customer = f"chaos-{self._run}-{w.number}"
            await persist(
                lambda: seed_customer(self._dsn, customer, faults=w.scenario.faults or None),
                "seeding a customer",
            )
            event_id = f"chaos-{self._run}-{w.number}"
            w.workflow_id = workflow_id_for("support", TENANT, event_id)
            w.start_id = event_id
            w.start = Envelope(
                event_id=event_id,
                type="START",
                workflow_type="support",
                tenant_id=TENANT,
                actor=UPSTREAM,
                occurred_at=utcnow(),
                payload={**REQUEST, "customer_id": customer},
            ).to_bytes()
        key = routing_key(TENANT, w.workflow_id) if w.workflow_id else None
        subject = subjects.request(w.scenario.workflow_type, self._bus.upstream_name, key)
        await self._publish(self._bus.upstream, w, subject, w.start, w.start_id)
        w.started = True

    async def answer(self, w: Workload, view: dict[str, Any]) -> None:
        """Send the scenario's answer to a workflow waiting for approval."""
        kind = w.scenario.answer
        if kind is None or w.answered:
            return
        if w.scenario.workflow_type == "request":
            case = self._cases[w.scenario.case or ""]
            assert case.approval is not None
            payload: dict[str, Any] = case.approval.model_dump()
            event = signal_envelope(view, "APPROVED", payload, APPROVER)
            event = event.model_copy(update={"expected_version": view["version"]})
        elif kind == "cancel":
            event = signal_envelope(view, "CANCEL_REQUESTED", {}, OPERATOR)
        elif kind == "reject":
            version = view["data"].get("recommendation_version") or 1
            payload = {"recommendation_version": version, "reason": "chaos says no"}
            event = signal_envelope(view, "REJECTED_BY_REVIEWER", payload, APPROVER)
        else:
            payload = approval_payload(view, None, None)
            event = signal_envelope(view, "APPROVED", payload, APPROVER)
        if w.scenario.workflow_type == "request":
            event = event.model_copy(update={"actor": casedrive.APPROVER})
        subject = subjects.signal(event.workflow_type, self._bus.approvals_name, key_of(event))
        await self._publish(self._bus.approvals, w, subject, event.to_bytes(), event.event_id)
        w.answered = True

    async def duplicate(self, w: Workload) -> None:
        """Deliver again something already sent (a new message id: the broker keeps both)."""
        if not w.sent:
            return
        subject, body, _ = w.sent[-1]
        headers = {subjects.HEADER_MSG_ID: f"dup-{uuid.uuid4()}"}
        await persist(
            lambda: self._admin.jetstream().publish(subject, body, headers=headers, timeout=5),
            "duplicating a delivery",
        )

    async def view(self, workflow_id: str) -> dict[str, Any] | None:
        return await persist(
            lambda: queries.workflow_view(self.engine, workflow_id), "reading a workflow"
        )

    async def _publish(
        self, nc: Client, w: Workload, subject: str, body: bytes, msg_id: str
    ) -> None:
        headers = {subjects.HEADER_MSG_ID: msg_id}
        await persist(
            lambda: nc.jetstream().publish(subject, body, headers=headers, timeout=5),
            f"publishing to {subject}",
        )
        w.sent.append((subject, body, msg_id))
