"""What happened to one event, as the projector reports it: for the consumer's span and
logs, and in the metrics of transitions, time in state, approvals, outcomes and retries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import Envelope
from interlock.otel import metrics
from interlock.otel.model_metrics import model_spent
from interlock.projector.engine import Accepted, Rejected
from interlock.projector.store.types import Stored


@dataclass(frozen=True)
class EventOutcome:
    """What happened to one event, for the consumer's span, metrics and logs."""

    workflow_id: str
    workflow_type: str
    event_type: str
    accepted: bool
    from_state: str | None = None
    to_state: str | None = None
    version: int | None = None
    reason: str | None = None
    trace_before: Mapping[str, str] = field(default_factory=dict)
    """The trace context of the transition the event was decided after (the checkpoint's;
    none for a new workflow): what a message without trace context of its own links to."""


def accepted(decision: Accepted, event: Envelope, before: Stored | None = None) -> EventOutcome:
    """`before`: the checkpoint it was decided on (None: it created the workflow)."""
    wf = decision.workflow
    return EventOutcome(
        workflow_id=wf.workflow_id,
        workflow_type=wf.workflow_type,
        event_type=event.type,
        accepted=True,
        from_state=decision.from_state,
        to_state=wf.state,
        version=wf.version,
        trace_before=before.trace_headers if before is not None else {},
    )


def rejected(before: Stored, event: Envelope, rejection: Rejected) -> EventOutcome:
    """`before`: the checkpoint it was refused on."""
    wf = before.workflow
    return EventOutcome(
        workflow_id=wf.workflow_id,
        workflow_type=wf.workflow_type,
        event_type=event.type,
        accepted=False,
        from_state=wf.state,
        version=wf.version,
        reason=rejection.reason,
        trace_before=before.trace_headers,
    )


def measure(
    definition: WorkflowDefinition,
    decision: Accepted,
    event: Envelope,
    before: Stored,
    now: datetime,
) -> None:
    """The metrics of an accepted transition (`before`: the checkpoint it was decided on)."""
    wf_type, source, target = definition.workflow_type, decision.from_state, decision.workflow.state
    metrics.transition(wf_type, event.type, True, None)
    if target != source:
        waited = (now - before.updated_at).total_seconds()
        metrics.time_in_state(wf_type, source, waited)
        spec = definition.announcement(source)
        if spec is not None and spec.name == "approval_requested":
            metrics.approval_wait(wf_type, waited, event.type)
    if definition.is_terminal(target):
        metrics.outcome(wf_type, target)
    seen = before.workflow.execution.model_spend.calls
    for call in decision.workflow.execution.model_calls:
        if call.seq > seen:
            model_spent(
                wf_type,
                call.task,
                call.model,
                tokens_in=call.tokens.input,
                tokens_out=call.tokens.output,
                cost=call.cost,
            )
    if decision.transition.action in ("schedule_retry", "branch_retry"):
        metrics.retry(wf_type, source, str(event.payload.get("error_class", "unknown")))
