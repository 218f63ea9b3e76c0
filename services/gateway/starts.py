"""From an authenticated webhook body to the request envelope that starts a workflow.

Pure: no I/O. The gateway checks what a request must satisfy to become a workflow at all (the
workflow type is installed, the payload fits its START model), so a payload the type refuses
is answered 400 here instead of being stored and dead-lettered without a workflow.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from interlock.contracts.clients import relayed_event_id
from interlock.contracts.envelope import Actor, Envelope, Identifier, summarise
from interlock.contracts.registry import Registry
from interlock.services.errors import Refusal
from interlock.services.gateway.signals import latest, payload_fits

START = "START"
ROLE = "upstream"
"""The actor role of a request relayed for a sender (whose name is the actor id)."""


class StartRequest(BaseModel):
    """The body of `POST /v1/workflows/{workflow_type}`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    payload: dict[str, Any]
    workflow_id: Identifier | None = None
    """Optional business key; absent, the id is derived from the tenant and the event id."""
    tenant_id: Identifier | None = None
    """Optional for a sender of one tenant (as for signals)."""


def parse(body: bytes) -> StartRequest:
    """Raise `Refusal` 400 `schema_mismatch` on a body that is not a `StartRequest`."""
    try:
        return StartRequest.model_validate_json(body)
    except ValidationError as exc:
        raise Refusal(400, "schema_mismatch", summarise(exc)) from None


def known(registry: Registry, workflow_type: str) -> None:
    """Raise `Refusal` 404 `unknown_workflow_type` unless `workflow_type` is installed."""
    latest(registry, workflow_type)


def check(registry: Registry, workflow_type: str, request: StartRequest) -> None:
    """Accept a payload the latest definition's START model accepts. Raises `Refusal` 404
    `unknown_workflow_type` or 400 `schema_mismatch` (field paths, never values)."""
    payload_fits(latest(registry, workflow_type).event(START), request.payload)


def envelope(
    workflow_type: str,
    request: StartRequest,
    *,
    sender: str,
    tenant_id: str,
    webhook_id: str,
    occurred_at: datetime,
    correlation_id: str | None = None,
) -> Envelope:
    """The request as an envelope whose `event_id` derives from the sender and webhook id (a
    webhook delivered again is the same request, and the same workflow). Raises `Refusal` 400
    `schema_mismatch` for an identifier too long."""
    try:
        return Envelope(
            event_id=relayed_event_id(sender, webhook_id),
            type=START,
            workflow_type=workflow_type,
            workflow_id=request.workflow_id,
            tenant_id=tenant_id,
            actor=Actor(id=sender, role=ROLE),
            correlation_id=correlation_id,
            occurred_at=occurred_at,
            payload=request.payload,
        )
    except ValidationError as exc:
        raise Refusal(400, "schema_mismatch", summarise(exc)) from None
