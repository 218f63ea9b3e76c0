"""The rows the in-memory store keeps, as PostgreSQL would give them back: the statements'
values through a JSON round trip, and the audit, history and timer records built from them."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from interlock.projector.store.records import AuditRecord, HistoryRecord, TimerRecord

Values = dict[str, Any]
Key = tuple[str, str]
"""(tenant_id, workflow_id): workflow ids are unique per tenant only."""


def key(values: Values) -> Key:
    return values["tenant_id"], values["workflow_id"]


def belongs(record: Any, tenant_id: str | None, workflow_id: str) -> bool:
    """Whether `record` belongs to the workflow (of any tenant when `tenant_id` is None)."""
    return bool(record.workflow_id == workflow_id and tenant_id in (None, record.tenant_id))


JSON_COLUMNS = frozenset(
    {"data", "execution", "trace_headers", "headers", "guard_results", "event", "inputs", "outcome"}
)


def as_stored(values: Values) -> Values:
    """`values` as they come back from PostgreSQL: JSON columns through a JSON round trip
    (what PostgreSQL cannot store fails here too, and nothing is shared with the caller)."""
    return {k: json.loads(json.dumps(v)) if k in JSON_COLUMNS else v for k, v in values.items()}


def armed_timers(values: Values) -> list[TimerRecord]:
    return [
        TimerRecord(
            id=timer_id,
            workflow_id=values["workflow_id"],
            workflow_type=values["workflow_type"],
            tenant_id=values["tenant_id"],
            kind=kind,
            event_type=event_type,
            fire_at=fire_at,
            branch=branch,
            status="armed",
            armed_version=values["version"],
            headers=values["trace_headers"],
        )
        for timer_id, kind, event_type, fire_at, branch in zip(
            values["timer_ids"],
            values["timer_kinds"],
            values["timer_events"],
            values["timer_fire_at"],
            values["timer_branches"],
            strict=True,
        )
    ]


def audit_record(
    values: Values, *, to_state: str | None, accepted: bool, reason: str | None
) -> AuditRecord:
    return AuditRecord(
        tenant_id=values["tenant_id"],
        workflow_id=values["workflow_id"],
        workflow_type=values["workflow_type"],
        event_id=values["event_id"],
        event_type=values["event_type"],
        from_state=values["from_state"],
        to_state=to_state,
        accepted=accepted,
        reason=reason,
        detail=values["detail"],
        actor_id=values["actor_id"],
        actor_role=values["actor_role"],
        state_version=values["version"],
        definition_version=values["definition_version"],
        causation_id=values["causation_id"],
        correlation_id=values["audit_correlation_id"],
        trace_id=values["trace_id"],
        guard_results=tuple(values["guard_results"]),
        occurred_at=values["occurred_at"],
        error_class=values["error_class"],
        error_message=values["error_message"],
    )


def history_record(values: Values, *, from_version: int, recorded_at: datetime) -> HistoryRecord:
    """The history row of a decided event."""
    accepted = bool(values["outcome"]["accepted"])
    return HistoryRecord(
        tenant_id=values["tenant_id"],
        workflow_id=values["workflow_id"],
        workflow_type=values["workflow_type"],
        definition_version=values["definition_version"],
        event=values["event"],
        accepted=accepted,
        reason=None if accepted else values["reason"],
        from_version=from_version,
        inputs=values["inputs"],
        outcome=values["outcome"],
        recorded_at=recorded_at,
    )
