"""Operator commands that send a signal and report the projector's decision."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import nats

from interlock import queries
from interlock.access import OPERATOR
from interlock.contracts.envelope import Actor
from interlock.contracts.urls import nats_inbox, nats_user
from interlock.signals import publish, signal_envelope

DECISION_TIMEOUT = 15.0


def caution(view: dict[str, Any]) -> dict[str, str]:
    """`{"caution": ...}` when the workflow is in review because an effect's outcome is
    unknown: whoever decides must first ask the provider whether it happened."""
    review = (view.get("execution") or {}).get("review") or {}
    key = review.get("idempotency_key")
    if review.get("reason") != "effect_outcome_unknown" or not key:
        return {}
    return {
        "caution": f"the effect's outcome is unknown: it may have happened. Check the provider "
        f"for idempotency key {key} before rejecting or retrying."
    }


async def send_and_wait(
    nats_url: str,
    database_url: str,
    workflow_id: str,
    event_type: str,
    *,
    payload: Callable[[dict[str, Any]], dict[str, Any]],
    actor: Actor,
    tenant_id: str | None = None,
) -> dict[str, Any]:
    """Send `event_type` to the workflow as the client `nats_url` connects as, and wait
    (bounded) for the recorded decision."""
    engine = queries.open_reader(database_url)
    try:
        try:
            view = await queries.workflow_view(engine, workflow_id, tenant_id)
        except queries.AmbiguousWorkflow as exc:
            return {"accepted": False, "reason": "ambiguous_workflow", "detail": str(exc)}
        if view is None:
            return {"accepted": False, "reason": "unknown_workflow", "detail": workflow_id}
        event = signal_envelope(view, event_type, payload(view), actor)
        warning = caution(view)
        nc = await nats.connect(nats_url, name="interlock-cli", inbox_prefix=nats_inbox(nats_url))
        try:
            await publish(nc.jetstream(), event, nats_user(nats_url) or OPERATOR)
        finally:
            await nc.drain()
        deadline = time.monotonic() + DECISION_TIMEOUT
        while time.monotonic() < deadline:
            decision = await queries.decision_for(
                engine, workflow_id, event.event_id, view["tenant_id"]
            )
            if decision is not None:
                return {"event_id": event.event_id, **decision, **warning}
            await asyncio.sleep(0.1)
        return {
            "event_id": event.event_id,
            "accepted": False,
            "reason": "no_decision",
            "detail": f"no decision within {DECISION_TIMEOUT}s; is `interlock up` running?",
        }
    finally:
        await engine.dispose()
