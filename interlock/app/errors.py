"""The composition root's errors: the stack it starts could not start or be reached."""

from __future__ import annotations

from interlock.contracts.errors import ErrorCode, InterlockError


class EmbeddedStartError(InterlockError):
    """An embedded server did not start; the message carries the tail of its log."""

    code = ErrorCode.EMBEDDED_START_FAILED
    retryable = False


class ExitedEarly(InterlockError):
    """The server process ended before it became ready."""

    code = ErrorCode.EMBEDDED_START_FAILED
    retryable = False


class ServerUnreachable(InterlockError):
    """The broker or the database did not accept a connection within the start-up deadline."""

    code = ErrorCode.CONFIGURATION
    retryable = False
