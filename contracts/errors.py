"""One exception root for everything Interlock raises on purpose, with a stable code.

Every error a user can see says what happened and what to do about it (`hint`).
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    MALFORMED_MESSAGE = "malformed_message"
    UNKNOWN_WORKFLOW = "unknown_workflow"
    INVALID_DEFINITION = "invalid_definition"
    CONCURRENCY_CONFLICT = "concurrency_conflict"
    DUPLICATE_EVENT = "duplicate_event"
    STORE_UNAVAILABLE = "store_unavailable"
    BROKER_UNAVAILABLE = "broker_unavailable"
    EXTERNAL_TIMEOUT = "external_timeout"
    EXTERNAL_UNAVAILABLE = "external_unavailable"
    EXTERNAL_REJECTED = "external_rejected"
    CONFIGURATION = "configuration"


class InterlockError(Exception):
    """Base of Interlock's own errors; `code` is stable, `hint` tells the reader what to do."""

    code: ErrorCode = ErrorCode.CONFIGURATION

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base} ({self.hint})" if self.hint else base


class TransientError(InterlockError):
    """Worth retrying later: a dependency is down or a race was lost too often."""
