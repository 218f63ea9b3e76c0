"""Persistence for the projector: the store port and its implementations (PostgreSQL in
`postgres`, in memory in `memory`), the schema, migrations and read-side tables."""

from interlock.projector.errors import ConcurrencyConflict, DuplicateEvent
from interlock.projector.store.port import WorkflowStore
from interlock.projector.store.types import NO_TRACE, Stored, TraceInfo

__all__ = [
    "NO_TRACE",
    "ConcurrencyConflict",
    "DuplicateEvent",
    "Stored",
    "TraceInfo",
    "WorkflowStore",
]
