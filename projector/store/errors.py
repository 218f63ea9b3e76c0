"""How the workflow store fails, whichever implementation backs it.

`StoreUnavailable` (the database cannot be reached) is shared with the relay, in
`interlock.contracts.errors`.
"""

from __future__ import annotations

from interlock.contracts.errors import ErrorCode, InterlockError, TransientError


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
