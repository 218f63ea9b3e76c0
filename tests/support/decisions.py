"""Decisions to hand a workflow store directly: a request's first transition as the engine
decides it, later transitions and refusals made by hand (a store does not care which row of
the table was taken, only what to write)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from interlock.contracts.envelope import Envelope
from interlock.projector.engine import Accepted, Context, Rejected, RejectReason, TimerRef, resolve
from interlock.projector.engine.model import Workflow
from interlock.projector.service import first_checkpoint, validated
from interlock.projector.store.types import TraceInfo
from tests.support.payloads import REQUEST, envelope
from tests.support.workflows import REGISTRY

T0 = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
TRACE = TraceInfo(
    trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
    headers={"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
)
_events = itertools.count(1)


@dataclass(frozen=True)
class Start:
    """A request and the engine's first transition for it."""

    decision: Accepted
    event: Envelope
    fingerprint: str

    @property
    def workflow(self) -> Workflow:
        return self.decision.workflow


def started(
    workflow_id: str,
    *,
    event_id: str | None = None,
    payload: dict[str, Any] | None = None,
    tenant_id: str = "acme",
) -> Start:
    """A support request for `workflow_id` and its accepted first transition (version 1)."""
    definition = REGISTRY.latest("support")
    request = envelope(
        "START",
        workflow_id=workflow_id,
        payload=payload or REQUEST,
        event_id=event_id or f"req-{next(_events)}",
        occurred_at=T0,
        tenant_id=tenant_id,
    )
    checked = validated(definition, request)
    decision = resolve(definition, first_checkpoint(definition, checked), checked, Context(now=T0))
    assert isinstance(decision, Accepted), decision
    return Start(decision, checked, fingerprint=f"fp-{sorted(checked.payload.items())}")


def event(
    workflow_id: str,
    event_type: str = "CANCEL_REQUESTED",
    *,
    event_id: str | None = None,
    tenant_id: str = "acme",
) -> Envelope:
    return envelope(
        event_type,
        workflow_id=workflow_id,
        event_id=event_id or f"evt-{next(_events)}",
        occurred_at=T0,
        tenant_id=tenant_id,
    )


def step(
    after: Workflow,
    *,
    state: str | None = None,
    arm: tuple[TimerRef, ...] = (),
    cancel: tuple[str, ...] = (),
) -> Accepted:
    """An accepted transition from checkpoint `after` to its next version."""
    definition = REGISTRY.get(after.workflow_type, after.definition_version)
    moved = after.model_copy(
        update={
            "version": after.version + 1,
            "state": state or after.state,
            "data": {**after.data, "steps": after.version},
        }
    )
    return Accepted(
        workflow=moved,
        from_state=after.state,
        transition=definition.transitions[0],
        timers_armed=arm,
        timers_cancelled=cancel,
        guard_results=("checked",),
    )


def timer(timer_id: str, *, minutes: int = 5, branch: str | None = None) -> TimerRef:
    return TimerRef(
        id=timer_id,
        kind="retry",
        event="RETRY_DUE",
        fire_at=T0 + timedelta(minutes=minutes),
        branch=branch,
    )


def refusal(reason: RejectReason = "invalid_transition") -> Rejected:
    return Rejected(reason, f"refused: {reason}", guard_results=("checked",))
