"""The projector service's own errors (its store's are in `projector.store.errors`)."""

from __future__ import annotations

from datetime import datetime

from interlock.contracts.errors import ErrorCode, TransientError


class NotDueYet(TransientError):
    """A timer firing arrived before its time (clock skew between services); the consumer
    redelivers it when due instead of discarding it."""

    code = ErrorCode.NOT_DUE_YET
    retryable = True

    def __init__(self, retry_at: datetime) -> None:
        super().__init__(f"not due before {retry_at.isoformat()}")
        self.retry_at = retry_at
