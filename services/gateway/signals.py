"""From an authenticated webhook body to the signal envelope the projector consumes.

Pure: no I/O. The gateway checks only what a message must satisfy to be worth deciding on
(the workflow type exists, the event is one of its signals, the payload fits the event's
model); whether the signal is *allowed* now is the projector's guards' business.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from interlock.contracts.clients import RELAYED_PREFIX, relayed_event_id
from interlock.contracts.definition import EventSpec, WorkflowDefinition
from interlock.contracts.envelope import Actor, Envelope, EventType, Identifier, summarise
from interlock.contracts.errors import UnknownDefinition
from interlock.contracts.registry import Registry
from interlock.services.errors import Refusal

EVENT_ID_PREFIX = RELAYED_PREFIX


class SignalRequest(BaseModel):
    """The body of `POST /v1/workflows/{workflow_type}/{workflow_id}/signals`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    workflow_id: Identifier
    """Repeats the path's workflow id inside the signed body, so a captured request cannot
    be replayed against another workflow (the signature does not cover the path)."""
    type: EventType
    actor: Actor
    payload: dict[str, Any] = Field(default_factory=dict)
    tenant_id: Identifier | None = None
    """Optional: the sender's configuration decides which tenants it may name, and a sender
    of one tenant need not name it."""
    expected_version: int | None = Field(default=None, ge=0)


def parse(body: bytes) -> SignalRequest:
    """Raise `Refusal` 400 `schema_mismatch` on a body that is not a `SignalRequest`."""
    try:
        return SignalRequest.model_validate_json(body)
    except ValidationError as exc:
        raise Refusal(400, "schema_mismatch", summarise(exc)) from None


def check(registry: Registry, workflow_type: str, request: SignalRequest) -> None:
    """Accept a signal of the latest definition of `workflow_type` with a fitting payload.

    Raises `Refusal`: 404 `unknown_workflow_type`, 400 `unknown_type` (no such event, or not
    a signal: a stage result or timer firing cannot come from outside), 400 `schema_mismatch`.
    """
    definition = latest(registry, workflow_type)
    spec = definition.event(request.type)
    if spec is None or spec.source != "signal":
        signals = sorted(e.name for e in definition.events if e.source == "signal")
        detail = f"{request.type} is not a {workflow_type} signal; signals: {signals}"
        raise Refusal(400, "unknown_type", detail)
    payload_fits(spec, request.payload)


def latest(registry: Registry, workflow_type: str) -> WorkflowDefinition:
    """The installed type's latest definition; `Refusal` 404 `unknown_workflow_type` if none."""
    try:
        return registry.latest(workflow_type)
    except UnknownDefinition as exc:
        raise Refusal(404, "unknown_workflow_type", str(exc)) from None


def payload_fits(spec: EventSpec | None, payload: dict[str, Any]) -> None:
    """`Refusal` 400 `schema_mismatch` (field paths, never values) unless the event's payload
    model accepts `payload` (an event without a model takes any)."""
    if spec is None or spec.payload is None:
        return
    try:
        spec.payload.model_validate(payload)
    except ValidationError as exc:
        raise Refusal(400, "schema_mismatch", f"payload: {summarise(exc)}") from None


def envelope(
    workflow_type: str,
    workflow_id: str,
    request: SignalRequest,
    *,
    sender: str,
    tenant_id: str,
    webhook_id: str,
    occurred_at: datetime,
    correlation_id: str | None = None,
    causation_id: str | None = None,
) -> Envelope:
    """The signal as an envelope whose `event_id` is derived from the sender and webhook id,
    so a webhook its sender retries is the same event. Raises `Refusal` 400
    `schema_mismatch` when the body names another workflow than the path, or an identifier
    is too long for the envelope."""
    if request.workflow_id != workflow_id:
        raise Refusal(400, "schema_mismatch", "the signed body names another workflow_id")
    try:
        return Envelope(
            event_id=relayed_event_id(sender, webhook_id),
            type=request.type,
            workflow_type=workflow_type,
            workflow_id=workflow_id,
            tenant_id=tenant_id,
            actor=request.actor,
            causation_id=causation_id,
            correlation_id=correlation_id,
            occurred_at=occurred_at,
            expected_version=request.expected_version,
            payload=request.payload,
        )
    except ValidationError as exc:
        raise Refusal(400, "schema_mismatch", summarise(exc)) from None
