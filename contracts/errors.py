"""One exception root for everything Interlock raises on purpose, and the errors of the contracts.

Every Interlock error derives from `InterlockError` and declares, as properties of its class,
a stable `code` (an `ErrorCode`) and whether it is `retryable`: a retryable error says the same
call may succeed later (a dependency is down, a race was lost), so consumers redeliver with a
backoff; any other error will fail again the same way. Retryable errors also derive from
`TransientError`, so a caller may catch either way.

Each layer keeps its own errors in one `errors` module (`projector.errors`, `relay.errors`,
`services.errors`, `messaging.errors`, `config.errors`, `ops.errors`, `app.errors`,
`client.errors`, `console.errors`, `tools.errors`); the public ones are re-exported by
`interlock.errors`. The errors more than one layer raises live here: `StoreUnavailable` and
`DatabaseNotMigrated` (the projector's store and the relay talk to the same PostgreSQL),
`PublishFailed` (the relay, the timer service and the gateway publish to the same broker) and
`ConfigurationError` (a setting or an adapter's configuration, wherever it is read).
Adapters translate driver errors into these (`raise StoreUnavailable(...) from exc`), so no
caller ever catches an asyncpg or nats exception. Every error a user can see says what
happened and what to do about it (`hint`).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import ClassVar, Protocol


class ErrorCode(StrEnum):
    MALFORMED_MESSAGE = "malformed_message"
    UNKNOWN_DEFINITION = "unknown_definition"
    INVALID_DEFINITION = "invalid_definition"
    CONCURRENCY_CONFLICT = "concurrency_conflict"
    DUPLICATE_EVENT = "duplicate_event"
    NOT_DUE_YET = "not_due_yet"
    STORE_UNAVAILABLE = "store_unavailable"
    BROKER_UNAVAILABLE = "broker_unavailable"
    EXTERNAL_TIMEOUT = "external_timeout"
    EXTERNAL_UNAVAILABLE = "external_unavailable"
    EXTERNAL_REJECTED = "external_rejected"
    REFUSED = "refused"
    EMBEDDED_START_FAILED = "embedded_start_failed"
    CONFIGURATION = "configuration"
    AMBIGUOUS_WORKFLOW = "ambiguous_workflow"
    STAGE_TRANSIENT = "stage_transient"


class InterlockError(Exception):
    """Base of Interlock's own errors; `code` is stable, `hint` tells the reader what to do.

    Abstract: raise a subclass, which declares its `code` and `retryable`.
    """

    code: ClassVar[ErrorCode]
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:
        base = super().__str__()
        return f"{base} ({self.hint})" if self.hint else base


def described(exc: BaseException) -> str:
    """An error as logs and dead letters may show it: our own errors by their message (they
    name ids and what to do), any other only by its kind, since a library's message may
    quote the values it choked on."""
    if isinstance(exc, InterlockError):
        return f"{type(exc).__name__}: {exc}"
    return type(exc).__name__


class TransientError(InterlockError):
    """Base of the errors worth retrying later: a dependency is down or a race was lost."""

    retryable = True


class StoreUnavailable(TransientError):
    """The database could not be reached or the connection was lost; nothing was written.
    Retry after a backoff (a relay's leadership lock went with its connection)."""

    code = ErrorCode.STORE_UNAVAILABLE
    retryable = True


class PublishFailed(TransientError):
    """JetStream did not acknowledge a message (`__cause__` says why): it may or may not be
    stored. Publishing it again under the same `Nats-Msg-Id` is safe: the broker drops a
    duplicate."""

    code = ErrorCode.BROKER_UNAVAILABLE
    retryable = True


class DatabaseNotMigrated(InterlockError):
    """The database answers but has no Interlock schema (a table the store or the relay reads
    is missing: it was never migrated). A setup problem, not a transient one: waiting will not
    create it."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class ConfigurationError(InterlockError):
    """A setting or an adapter's configuration cannot work (an invalid setting, a secret an
    adapter references is not set, a path template names a parameter the call does not
    supply); the message names the variable or setting, never a secret's value. Fix the
    configuration; retrying cannot help."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class MalformedMessage(InterlockError):
    """A message that can never be processed; it belongs in a dead-letter subject.

    `reason` is a stable code (`oversized`, `bad_json`, `schema_mismatch`, `unknown_type`,
    `unknown_workflow` …) and `detail` the validation error, both recorded with the dead letter.
    """

    code = ErrorCode.MALFORMED_MESSAGE
    retryable = False

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}", hint="fix the publisher; see the dead letter")
        self.reason = reason
        self.detail = detail


class UnknownDefinition(InterlockError):
    """No definition is registered for that workflow type (and version)."""

    code = ErrorCode.UNKNOWN_DEFINITION
    retryable = False


class Issue(Protocol):
    """One finding of the graph check (`graphcheck.GraphIssue`)."""

    @property
    def code(self) -> str: ...

    @property
    def message(self) -> str: ...


class DefinitionError(InterlockError):
    """A definition failed the graph check; the message lists every issue found."""

    code = ErrorCode.INVALID_DEFINITION
    retryable = False

    def __init__(self, workflow_type: str, version: int, issues: Sequence[Issue]) -> None:
        lines = "\n".join(f"  - [{i.code}] {i.message}" for i in issues)
        super().__init__(f"workflow definition {workflow_type!r} v{version} is refused:\n{lines}")
        self.issues = list(issues)
