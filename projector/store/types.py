"""Small value types shared by the store and the projector service."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from interlock.projector.engine.model import Workflow


@dataclass(frozen=True)
class TraceInfo:
    """The trace an event was decided in: its id for the audit row, and the propagation
    headers stored with every outbox and timer row it produced."""

    trace_id: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


NO_TRACE = TraceInfo()


@dataclass(frozen=True)
class Stored:
    """A loaded checkpoint, the fingerprint of the request that created it, when it last
    changed, and the trace context of the transition that made it (what a message without
    trace context of its own links to)."""

    workflow: Workflow
    fingerprint: str
    updated_at: datetime
    trace_headers: Mapping[str, str] = field(default_factory=dict)
