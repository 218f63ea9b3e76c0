"""Human and operator commands as messages on `wf.in.signal.<type>`."""

from __future__ import annotations

import uuid
from typing import Any

from nats.js import JetStreamContext

from contracts import subjects
from contracts.envelope import Actor, Envelope, utcnow


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


async def publish(js: JetStreamContext, event: Envelope) -> None:
    """Publish a signal; the broker acknowledges it durably before this returns."""
    await js.publish(
        subjects.signal(event.workflow_type),
        event.to_bytes(),
        headers={subjects.HEADER_MSG_ID: event.event_id},
    )


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
