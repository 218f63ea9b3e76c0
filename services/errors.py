"""The errors of the stage services, their ports and adapters, and the gateway.

Ports fail with these, never with a driver's exceptions: `ExternalTimeout` (no answer in
time — the call may or may not have taken effect), `ExternalUnavailable` (refused before doing
anything; safe to retry), `ExternalRejected` (a definitive, permanent "no"). Adapters
translate transport errors into them (`raise ExternalUnavailable(...) from exc`).
"""

from __future__ import annotations

from pydantic import ValidationError

from interlock.contracts.errors import ErrorCode, InterlockError, TransientError


class ExternalTimeout(TransientError):
    """No answer in time. For a write, the outcome is unknown: reconcile before retrying."""

    code = ErrorCode.EXTERNAL_TIMEOUT
    retryable = True


class ExternalUnavailable(TransientError):
    """The system refused or could not be reached; nothing was done. Retry later.

    `retry_after` is how many seconds the system asked us to wait (an HTTP `Retry-After`),
    when it said; a retry sooner than that is likely to be refused again.
    """

    code = ErrorCode.EXTERNAL_UNAVAILABLE
    retryable = True

    def __init__(self, message: str, *, hint: str = "", retry_after: float | None = None) -> None:
        super().__init__(message, hint=hint)
        self.retry_after = retry_after


class ExternalRejected(InterlockError):
    """A definitive refusal (unknown customer, invalid operation). Do not retry."""

    code = ErrorCode.EXTERNAL_REJECTED
    retryable = False

    def __init__(self, message: str, *, error_class: str) -> None:
        super().__init__(message)
        self.error_class = error_class


class OutcomeUnknown(ExternalTimeout):
    """The provider neither confirmed nor shows the effect; the job is redelivered later and
    reconciles again under the same key. `idempotency_key` names the effect, so a person
    can ask the provider about it when the outcome stays unknown."""

    code = ErrorCode.EXTERNAL_TIMEOUT
    retryable = True

    def __init__(self, message: str, *, idempotency_key: str) -> None:
        super().__init__(message, hint="check the provider for this idempotency key")
        self.idempotency_key = idempotency_key


class RecordedFixtureError(InterlockError):
    """A recorded model's fixture file cannot be read or is not in an accepted format."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class Refusal(InterlockError):
    """The gateway refuses a request: `status` to answer, `reason` (a stable code:
    `unknown_sender`, `bad_signature`, `forged_actor`, `forged_tenant`, `forged_type`,
    `schema_mismatch`, `unknown_type`, `unknown_workflow_type`, `oversized`) and a `detail`
    safe to show the caller and to record (never a secret or a signature)."""

    code = ErrorCode.REFUSED
    retryable = False

    def __init__(self, status: int, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.status = status
        self.reason = reason
        self.detail = detail


def invalid_fields(error: ValidationError, most: int = 3) -> str:
    """Where an answer failed validation (field paths, or the error type for a body that is
    not JSON), never the values: an error may say what was unreadable without repeating it."""
    return ", ".join(".".join(map(str, e["loc"])) or e["type"] for e in error.errors()[:most])


class ProjectorSilent(TransientError):
    """No projector partition answered whether a workflow still waits for a job: an effect
    must not act on a job nobody confirmed, so the job goes back to the broker to be asked
    about again later (its worker freed meanwhile)."""

    code = ErrorCode.BROKER_UNAVAILABLE
    retryable = True
