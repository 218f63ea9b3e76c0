"""Row builders: how a decision is written down. Pure functions from engine values to dicts."""

from __future__ import annotations

from typing import Any

from sqlalchemy.dialects.postgresql import Insert, insert

from contracts import subjects
from contracts.envelope import Envelope, utcnow
from contracts.ids import kv_key
from contracts.jobs import OpenJobs
from projector.engine.model import Accepted, Rejected, Workflow
from projector.store.schema import workflows
from projector.store.types import TraceInfo


def workflow_changes(wf: Workflow, trace: TraceInfo) -> dict[str, Any]:
    return {
        "state": wf.state,
        "version": wf.version,
        "data": wf.data,
        "execution": wf.execution.model_dump(mode="json"),
        "trace_headers": dict(trace.headers),
        "updated_at": utcnow(),
    }


def insert_workflow(wf: Workflow, fingerprint: str, trace: TraceInfo) -> Insert:
    now = utcnow()
    values = {
        "id": wf.workflow_id,
        "workflow_type": wf.workflow_type,
        "tenant_id": wf.tenant_id,
        "definition_version": wf.definition_version,
        "fingerprint": fingerprint,
        "correlation_id": wf.correlation_id,
        "created_at": now,
        **workflow_changes(wf, trace),
    }
    return insert(workflows).values(values).on_conflict_do_nothing(index_elements=["id"])


def processed_row(event: Envelope, workflow_id: str, accepted: bool) -> dict[str, Any]:
    return {
        "event_id": event.event_id,
        "workflow_id": workflow_id,
        "accepted": accepted,
        "processed_at": utcnow(),
    }


def _audit_base(wf: Workflow, event: Envelope, trace: TraceInfo) -> dict[str, Any]:
    return {
        "workflow_id": wf.workflow_id,
        "workflow_type": wf.workflow_type,
        "event_id": event.event_id,
        "event_type": event.type,
        "actor_id": event.actor.id,
        "actor_role": event.actor.role,
        "definition_version": wf.definition_version,
        "causation_id": event.causation_id,
        "correlation_id": event.correlation_id or wf.correlation_id,
        "trace_id": trace.trace_id,
        "occurred_at": event.occurred_at,
        "recorded_at": utcnow(),
    }


def accepted_audit(decision: Accepted, event: Envelope, trace: TraceInfo) -> dict[str, Any]:
    wf = decision.workflow
    return {
        **_audit_base(wf, event, trace),
        "from_state": decision.from_state,
        "to_state": wf.state,
        "accepted": True,
        "reason": None,
        "detail": decision.note,
        "state_version": wf.version,
        "guard_results": list(decision.guard_results),
    }


def rejection_audit(
    wf: Workflow, event: Envelope, rejection: Rejected, trace: TraceInfo
) -> dict[str, Any]:
    return {
        **_audit_base(wf, event, trace),
        "from_state": wf.state,
        "to_state": None,
        "accepted": False,
        "reason": rejection.reason,
        "detail": rejection.detail,
        "state_version": wf.version,
        "guard_results": list(rejection.guard_results),
    }


def outbox_rows(decision: Accepted, trace: TraceInfo) -> list[dict[str, Any]]:
    """Messages to publish, plus the open-jobs record when the set of open jobs changed.

    The open-jobs record goes first so that a service never sees a job newer than the
    record that lists it (the relay publishes rows in order).
    """
    wf, now = decision.workflow, utcnow()
    rows: list[dict[str, Any]] = []
    if decision.jobs_changed:
        record = OpenJobs(version=wf.version, state=wf.state, jobs=sorted(wf.execution.open_jobs))
        rows.append(
            {
                "subject": f"$KV.{subjects.JOBS_BUCKET}.{kv_key(wf.workflow_id)}",
                "headers": {},
                "body": record.model_dump_json().encode(),
                "workflow_id": wf.workflow_id,
                "created_at": now,
            }
        )
    rows += [
        {
            "subject": m.subject,
            "headers": dict(trace.headers),
            "body": m.envelope.to_bytes(),
            "workflow_id": wf.workflow_id,
            "created_at": now,
        }
        for m in decision.messages
    ]
    return rows


def timer_rows(decision: Accepted, trace: TraceInfo) -> list[dict[str, Any]]:
    wf, now = decision.workflow, utcnow()
    return [
        {
            "id": t.id,
            "workflow_id": wf.workflow_id,
            "workflow_type": wf.workflow_type,
            "tenant_id": wf.tenant_id,
            "kind": t.kind,
            "event_type": t.event,
            "fire_at": t.fire_at,
            "branch": t.branch,
            "status": "armed",
            "armed_version": wf.version,
            "headers": dict(trace.headers),
            "created_at": now,
            "updated_at": now,
        }
        for t in decision.timers_armed
    ]
