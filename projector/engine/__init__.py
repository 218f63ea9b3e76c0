"""The pure transition engine: frozen values in, a decision out, no I/O."""

from projector.engine.actions import ACTIONS
from projector.engine.guards import GUARDS
from projector.engine.model import (
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
from projector.engine.resolve import resolve

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
