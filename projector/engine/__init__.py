"""The pure transition engine: frozen values in, a decision out, no I/O."""

from interlock.projector.engine.actions import ACTIONS
from interlock.projector.engine.guards import GUARDS
from interlock.projector.engine.model import (
    Accepted,
    Context,
    Decision,
    Execution,
    OutMessage,
    Rejected,
    RejectReason,
    TimerRef,
    Workflow,
)
from interlock.projector.engine.resolve import resolve

__all__ = [
    "ACTIONS",
    "GUARDS",
    "Accepted",
    "Context",
    "Decision",
    "Execution",
    "OutMessage",
    "RejectReason",
    "Rejected",
    "TimerRef",
    "Workflow",
    "resolve",
]
