"""The projector's own errors, its store's included, whichever implementation backs it.

`StoreUnavailable` (the database cannot be reached) and `DatabaseNotMigrated` (it has no
schema) are shared with the relay, in `interlock.contracts.errors`.
"""

from __future__ import annotations

from datetime import datetime

from interlock.contracts.errors import (
    DatabaseNotMigrated,
    ErrorCode,
    InterlockError,
    TransientError,
)


class NotDueYet(TransientError):
    """A timer firing arrived before its time (clock skew between services); the consumer
    redelivers it when due instead of discarding it."""

    code = ErrorCode.NOT_DUE_YET
    retryable = True

    def __init__(self, retry_at: datetime) -> None:
        super().__init__(f"not due before {retry_at.isoformat()}")
        self.retry_at = retry_at


class ConcurrencyConflict(TransientError):
    """Another writer advanced the workflow first (the compare-and-set on its version matched
    no row); nothing was written. Reload and decide again, never overwrite."""

    code = ErrorCode.CONCURRENCY_CONFLICT
    retryable = True


class DuplicateEvent(InterlockError):
    """The (workflow, event id) was already processed, by a concurrent writer; nothing was
    written. Deciding the event again can only find it processed."""

    code = ErrorCode.DUPLICATE_EVENT
    retryable = False


UNDEFINED_TABLE = "42P01"
"""PostgreSQL's SQLSTATE for a relation that does not exist."""


def schema_missing(exc: BaseException) -> DatabaseNotMigrated | None:
    """`DatabaseNotMigrated` if `exc` (or what it wraps, however deep: SQLAlchemy's translation,
    the driver's error, an exception group) is PostgreSQL's undefined-table error; else None.
    Recognised by SQLSTATE, never by the message."""
    seen: set[int] = set()
    pending: list[BaseException] = [exc]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if getattr(current, "sqlstate", None) == UNDEFINED_TABLE:
            return DatabaseNotMigrated(
                "the database has no Interlock schema (it was never migrated)",
                hint="create it with `interlock migrate` on the same INTERLOCK_DATABASE_URL",
            )
        pending += [e for e in (current.__cause__, current.__context__) if e is not None]
        orig = getattr(current, "orig", None)
        if isinstance(orig, BaseException):
            pending.append(orig)
        if isinstance(current, BaseExceptionGroup):
            pending += current.exceptions
    return None
