"""The messaging layer's errors: streams the broker cannot keep as configured, dead letters
that may not be sent back."""

from __future__ import annotations

from interlock.contracts.errors import ErrorCode, InterlockError


class ReplicasRefused(InterlockError):
    """The broker cannot keep the streams at the configured replica count (a single server,
    or a cluster of fewer nodes)."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class NotRedrivable(InterlockError):
    """This dead letter may not be sent back; the message says why, in one line."""

    code = ErrorCode.REFUSED
    retryable = False


class PartitionLayoutError(InterlockError):
    """The inbound stream cannot serve the configured partition count as it is."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class DrainTimedOut(PartitionLayoutError):
    """The slots a change of count moves still held messages when the time ran out (they
    were opened again)."""

    code = ErrorCode.CONFIGURATION
    retryable = False
