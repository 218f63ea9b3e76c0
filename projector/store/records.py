"""What a workflow store has written besides checkpoints, as tests read it back: audit rows,
processed events, outbox rows and timer rows. `InMemoryWorkflowStore` keeps these; a test of
the PostgreSQL store reads the same shapes from its tables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

TimerStatus = Literal["armed", "published", "cancelled"]


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One decided event, accepted or refused (`to_state` is None on a refusal)."""

    tenant_id: str
    workflow_id: str
    workflow_type: str
    event_id: str
    event_type: str
    from_state: str | None
    to_state: str | None
    accepted: bool
    reason: str | None
    detail: str | None
    actor_id: str
    actor_role: str
    state_version: int
    definition_version: int | None
    causation_id: str | None
    correlation_id: str | None
    trace_id: str | None
    guard_results: tuple[str, ...]
    occurred_at: datetime
    error_class: str | None = None
    """Of a stage's report of a failure: its error class (or an escalation's reason)."""
    error_message: str | None = None
    """Of a stage's report of a failure: its redacted description (`ValueError: boom`)."""


@dataclass(frozen=True, slots=True)
class ProcessedEvent:
    """An accepted event: it can never be decided again for this workflow."""

    tenant_id: str
    workflow_id: str
    event_id: str


@dataclass(frozen=True, slots=True)
class OutboxRecord:
    """A message the relay will publish, in the order the decisions were committed."""

    subject: str
    headers: Mapping[str, str]
    body: bytes
    tenant_id: str | None
    workflow_id: str | None


@dataclass(frozen=True, slots=True)
class TimerRecord:
    """A timer the timer service will fire while it is `armed`."""

    id: str
    workflow_id: str
    workflow_type: str
    tenant_id: str
    kind: str
    event_type: str
    fire_at: datetime
    branch: str | None
    status: TimerStatus
    armed_version: int
    headers: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class HistoryRecord:
    """One decided event as the history keeps it: the event as decided (payload included),
    what the decision read besides it (`inputs`: `now` and the parameter overrides) and its
    outcome (`projector.digest`). `from_version` is the workflow's version before it."""

    tenant_id: str
    workflow_id: str
    workflow_type: str
    definition_version: int
    event: Mapping[str, Any]
    accepted: bool
    reason: str | None
    from_version: int
    inputs: Mapping[str, Any]
    outcome: Mapping[str, Any]
    recorded_at: datetime
