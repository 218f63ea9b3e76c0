"""The errors a stage raises on purpose."""

from __future__ import annotations

from interlock.contracts.errors import ErrorCode, TransientError


class Transient(TransientError):
    """Raise (or derive from) this for a failure worth trying the job again: the runtime
    redelivers the job with a growing backoff, and escalates on the last delivery. Any other
    exception a stage raises is taken to fail the same way again (a bug, bad data): the job
    answers `PERMANENT_ERROR` at once, its class and redacted message kept. A class of your
    own may say the same with `retryable = True`."""

    code = ErrorCode.STAGE_TRANSIENT
    retryable = True
