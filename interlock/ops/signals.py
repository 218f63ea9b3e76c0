"""Human and operator commands as messages on `wf.in.signal.<type>.<key>.<client>` (the
workflow's routing key; unkeyed, `wf.in.request.<type>.<client>`, for a request whose id the
publisher cannot derive)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from opentelemetry import trace

from interlock.config.access import APPROVALS, UPSTREAM, as_client
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.partitions import key_of
from interlock.contracts.registry import Registry
from interlock.contracts.urls import nats_inbox, nats_servers, nats_user
from interlock.otel.messaging import publishing

tracer = trace.get_tracer("interlock.cli")


def signal_envelope(
    view: dict[str, Any], event_type: str, payload: dict[str, Any], actor: Actor
) -> Envelope:
    return Envelope(
        event_id=f"sig-{uuid.uuid4()}",
        type=event_type,
        workflow_type=view["workflow_type"],
        workflow_id=view["workflow_id"],
        tenant_id=view["tenant_id"],
        actor=actor,
        correlation_id=view.get("correlation_id"),
        occurred_at=utcnow(),
        payload=payload,
    )


async def publish(
    js: JetStreamContext,
    event: Envelope,
    sender: str,
    parent: Mapping[str, str] | None = None,
    *,
    registry: Registry | None = None,
) -> None:
    """Publish an inbound event (a request when `type` is START, else a signal) as client
    `sender` (the NATS user of `js`'s connection) in a producer span — a child of `parent`
    (e.g. the approval task being answered) or of the current context. The broker
    acknowledges it durably before this returns. The subject carries the workflow's routing
    key where it is known (`registry` derives a request's workflow id)."""
    kind = subjects.request if event.type == "START" else subjects.signal
    subject = kind(event.workflow_type, sender, key_of(event, registry))
    headers = {subjects.HEADER_MSG_ID: event.event_id}
    span = publishing(
        tracer,
        subject,
        headers,
        parent,
        message_id=event.event_id,
        template=subjects.template(subject),
    )
    try:
        await js.publish(subject, event.to_bytes(), headers=headers)
    finally:
        span.end()


def refused_since(nc: Client, before: Exception | None) -> str | None:
    """The publish the broker refused this connection since its last error was `before`
    (`nc.last_error` then), said as the broker said it; None if it refused none. The broker
    answers a publish it does not permit with an error on the connection, not on the publish,
    which then only times out."""
    error = nc.last_error
    if error is None or error is before:
        return None
    text = str(error).removeprefix("nats: ")
    return text if "permissions violation for publish" in text.lower() else None


def approval_payload(
    view: dict[str, Any], version: int | None, amount: str | None
) -> dict[str, Any]:
    """Approve the current recommendation unless a version/amount is given explicitly."""
    data = view["data"]
    recommendation = data.get("recommendation") or {}
    return {
        "recommendation_version": version or data.get("recommendation_version") or 1,
        "amount": amount or recommendation.get("amount") or "0",
    }


def reason_payload(view: dict[str, Any], reason: str) -> dict[str, Any]:
    """A rejection or cancellation, with why (for the audit trail)."""
    return {"reason": reason}


def changes_payload(view: dict[str, Any], feedback: str) -> dict[str, Any]:
    """Ask for a new recommendation, naming the one reviewed and what should change."""
    return {
        "recommendation_version": view["data"].get("recommendation_version") or 1,
        "feedback": feedback,
    }


def no_payload(view: dict[str, Any]) -> dict[str, Any]:
    return {}


@dataclass
class Clients:
    """The installation's own external clients, one connection each, as outside systems
    would connect: requests go out as `upstream`, signals as `approvals`; either may read
    announcements. For the demo and the benchmark."""

    upstream: Client
    approvals: Client
    upstream_name: str = UPSTREAM
    approvals_name: str = APPROVALS
    """The client names the connections publish as (their NATS users)."""

    @classmethod
    async def connect(cls, settings: Settings, nats_url: str, name: str, **options: Any) -> Clients:
        """Connect both to the server of `nats_url` (see `access.as_client`); `options` go to
        `nats.connect` (e.g. reconnecting without limit)."""
        upstream, approvals = (as_client(settings, nats_url, c) for c in (UPSTREAM, APPROVALS))
        return cls(
            await nats.connect(
                nats_servers(upstream),
                name=f"{name}-up",
                inbox_prefix=nats_inbox(upstream),
                **options,
            ),
            await nats.connect(
                nats_servers(approvals),
                name=f"{name}-ok",
                inbox_prefix=nats_inbox(approvals),
                **options,
            ),
            nats_user(upstream) or UPSTREAM,
            nats_user(approvals) or APPROVALS,
        )

    async def publish(self, event: Envelope, parent: Mapping[str, str] | None = None) -> None:
        """Publish `event`: a request (START) as `upstream`, anything else as `approvals`."""
        if event.type == "START":
            await publish(self.upstream.jetstream(), event, self.upstream_name, parent)
        else:
            await publish(self.approvals.jetstream(), event, self.approvals_name, parent)

    async def close(self) -> None:
        for nc in (self.upstream, self.approvals):
            await nc.drain()
