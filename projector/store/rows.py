"""How a decision is written down (the values of the store's statements) and how a checkpoint is
read back, as pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interlock.contracts.definition import GENERIC_RESULTS
from interlock.contracts.envelope import Envelope
from interlock.projector.digest import outcome
from interlock.projector.engine.model import Accepted, Context, Execution, Rejected, Workflow
from interlock.projector.store.records import HistoryRecord
from interlock.projector.store.types import Stored, TraceInfo


def _event(wf: Workflow, event: Envelope, trace: TraceInfo) -> dict[str, Any]:
    return {
        "workflow_id": wf.workflow_id,
        "workflow_type": wf.workflow_type,
        "tenant_id": wf.tenant_id,
        "definition_version": wf.definition_version,
        "event_id": event.event_id,
        "event_type": event.type,
        "actor_id": event.actor.id,
        "actor_role": event.actor.role,
        "causation_id": event.causation_id,
        "audit_correlation_id": event.correlation_id or wf.correlation_id,
        "trace_id": trace.trace_id,
        "occurred_at": event.occurred_at,
        **failure(event),
    }


def failure(event: Envelope) -> dict[str, Any]:
    """The audit's `error_class` and `error_message` of `event`: set when it is a stage's
    report of a failure (its `error_class`, or an escalation's `reason`, and its `detail`),
    None otherwise."""
    payload = event.payload
    reported = event.type in GENERIC_RESULTS or "error_class" in payload
    code = payload.get("error_class") or payload.get("reason") if reported else None
    message = payload.get("detail") if reported else None
    return {
        "error_class": str(code)[:64] if code else None,
        "error_message": str(message)[:1000] if message else None,
    }


def _history(event: Envelope, ctx: Context | None) -> dict[str, Any]:
    """The history's columns of a decided event: the event as decided and the inputs the
    decision read (None `now`: it was refused before the engine was asked)."""
    return {
        "event": event.model_dump(mode="json"),
        "inputs": {
            "now": ctx.now.isoformat() if ctx is not None else None,
            "parameters": dict(ctx.parameters) if ctx is not None else {},
        },
    }


def accepted(
    decision: Accepted,
    event: Envelope,
    trace: TraceInfo,
    fingerprint: str | None = None,
    ctx: Context | None = None,
) -> dict[str, Any]:
    """Values for COMMIT (and CREATE, which also needs the fingerprint)."""
    wf = decision.workflow
    messages = outbox_messages(decision, trace)
    timers = decision.timers_armed
    execution = wf.execution.model_dump(mode="json")
    return {
        **_event(wf, event, trace),
        **_history(event, ctx),
        "outcome": outcome(decision, execution=execution),
        "state": wf.state,
        "version": wf.version,
        "data": wf.data,
        "execution": execution,
        "trace_headers": dict(trace.headers),
        "fingerprint": fingerprint,
        "correlation_id": wf.correlation_id,
        "from_state": decision.from_state,
        "detail": decision.note,
        "guard_results": list(decision.guard_results),
        "subjects": [m[0] for m in messages],
        "headers": [m[1] for m in messages],
        "bodies": [m[2] for m in messages],
        "timer_ids": [t.id for t in timers],
        "timer_kinds": [t.kind for t in timers],
        "timer_events": [t.event for t in timers],
        "timer_fire_at": [t.fire_at for t in timers],
        "timer_branches": [t.branch for t in timers],
        "cancelled_timers": list(decision.timers_cancelled),
    }


def loaded(row: Mapping[str, Any], event_id: str | None) -> Stored:
    """The checkpoint in a `workflows` row as LOAD selects it: its columns, JSON decoded, and
    `seen` (whether `event_id` was already processed for the workflow)."""
    return Stored(
        workflow=workflow_of(row, event_id),
        fingerprint=row["fingerprint"],
        updated_at=row["updated_at"],
        trace_headers=row["trace_headers"] or {},
    )


def workflow_of(row: Mapping[str, Any], event_id: str | None) -> Workflow:
    """The workflow in a `workflows` row (`seen` is read only for an `event_id`)."""
    return Workflow(
        workflow_id=row["id"],
        workflow_type=row["workflow_type"],
        tenant_id=row["tenant_id"],
        state=row["state"],
        version=row["version"],
        definition_version=row["definition_version"],
        data=row["data"],
        execution=Execution.model_validate(row["execution"]),
        correlation_id=row["correlation_id"],
        seen_event_ids=frozenset({event_id}) if event_id and row["seen"] else frozenset(),
    )


def history_record(row: Mapping[str, Any]) -> HistoryRecord:
    """A `history` row as the store's HISTORY statement selects it."""
    return HistoryRecord(
        **{name: row[name] for name in HISTORY_COLUMNS},
    )


HISTORY_COLUMNS = (
    "tenant_id",
    "workflow_id",
    "workflow_type",
    "definition_version",
    "event",
    "accepted",
    "reason",
    "from_version",
    "inputs",
    "outcome",
    "recorded_at",
)


ENGINE_REFUSALS = frozenset(
    {"invalid_transition", "guard_rejected", "stale_version", "terminal", "duplicate"}
)
"""Refusals of an event that passed the projector's door: a failure it reports is the stage's
own and is audited; one refused at the door (a sender that may not say it) is not repeated."""
NO_FAILURE = {"error_class": None, "error_message": None}

COUNTED = frozenset({"idempotent_replay", "idempotency_conflict"})
"""Refusals of repeated requests: the first of each reason is audited, every one counted."""


def rejected(
    wf: Workflow, event: Envelope, rejection: Rejected, trace: TraceInfo, ctx: Context | None = None
) -> dict[str, Any]:
    """Values for REJECT: a repeated request is counted on the workflow (`counted`), any
    other refusal recorded once per event id."""
    return {
        **_event(wf, event, trace),
        **_history(event, ctx),
        "outcome": outcome(rejection),
        "from_state": wf.state,
        "version": wf.version,
        "reason": rejection.reason,
        "detail": rejection.detail,
        "guard_results": list(rejection.guard_results),
        "counted": rejection.reason in COUNTED,
        **({} if rejection.reason in ENGINE_REFUSALS else NO_FAILURE),
    }


Message = tuple[str, dict[str, str], bytes]


def outbox_messages(decision: Accepted, trace: TraceInfo) -> list[Message]:
    """(subject, headers, body) to publish, in the decision's order."""
    return [(m.subject, dict(trace.headers), m.envelope.to_bytes()) for m in decision.messages]
