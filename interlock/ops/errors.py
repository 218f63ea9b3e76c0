"""The operations' errors: what an operator asked for that cannot be done as asked."""

from __future__ import annotations

from interlock.contracts.errors import ErrorCode, InterlockError
from interlock.services.ports import ModelRequest


class InvalidSignal(InterlockError):
    """A signal that cannot be sent as asked (an undeclared event, a malformed option, a
    payload its model refuses); the message is one line and carries no payload value."""

    code = ErrorCode.MALFORMED_MESSAGE
    retryable = False


class NotAccepted(InvalidSignal):
    """A signal whose required fields the workflow does not show, to a workflow whose state
    accepts no such event (`reason`: `terminal` or `invalid_transition`, as the projector
    would refuse it): there is nothing to bind it to, so it is not sent."""

    code = ErrorCode.REFUSED
    retryable = False

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


class GoldenSetError(InterlockError):
    """A golden set that cannot be read, or a task or prompt that cannot be evaluated."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class AmbiguousWorkflow(InterlockError):
    """A workflow id that several tenants use, asked for without naming the tenant."""

    code = ErrorCode.AMBIGUOUS_WORKFLOW
    retryable = False

    def __init__(self, workflow_id: str, tenants: list[str]) -> None:
        super().__init__(
            f"workflow {workflow_id} exists for tenants {', '.join(tenants)}",
            hint="name one with --tenant",
        )
        self.tenants = tenants


class InvalidSelection(InterlockError):
    """The selection cannot be used as given; the message says which option and why."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class RequestCaptured(InterlockError):
    """Raised by a shadow run's model client once the stage has made its request: the stage
    is stopped there, never answered."""

    code = ErrorCode.REFUSED
    retryable = False

    def __init__(self, request: ModelRequest) -> None:
        super().__init__("the request was captured for a shadow run")
        self.request = request
