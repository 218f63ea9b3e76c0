"""The console's errors: what a page answers when it cannot show what was asked."""

from __future__ import annotations

from interlock.contracts.errors import ErrorCode, InterlockError, TransientError


class Unavailable(TransientError):
    """The broker cannot be reached, or refuses this identity what was asked (a missing
    permission looks like no answer); the page says so and the operator may try again."""

    code = ErrorCode.BROKER_UNAVAILABLE
    retryable = True


class BadFilter(InterlockError):
    """A filter value the list cannot be asked with: answered 400, naming the filter."""

    code = ErrorCode.REFUSED
    retryable = False


class Busy(TransientError):
    """A login whose password check was not started: the same name from the same client is
    being checked, or as many checks as the console runs at once are (`checks`); answered
    429 with `Retry-After`, its reason in the message."""

    code = ErrorCode.REFUSED
    retryable = True
