"""What `Client` raises: no Interlock to talk to, or a start it refuses to send."""

from __future__ import annotations

from pydantic import ValidationError

from interlock.contracts.envelope import summarise
from interlock.contracts.errors import ErrorCode, InterlockError


class NotConnected(InterlockError):
    """The client found no Interlock to connect to (no endpoints file, or no client of that
    name in it)."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class StartRefused(InterlockError):
    """A request the client does not send, because it could never become a workflow."""

    code = ErrorCode.MALFORMED_MESSAGE
    retryable = False


class UnknownWorkflowType(StartRefused):
    """No installed plugin defines that workflow type."""

    code = ErrorCode.UNKNOWN_DEFINITION
    retryable = False

    def __init__(self, workflow_type: str, installed: list[str]) -> None:
        super().__init__(
            f"no workflow type {workflow_type!r} is installed (installed: {', '.join(installed)})",
            hint="install its plugin, or name one of those",
        )
        self.workflow_type = workflow_type


class InvalidPayload(StartRefused):
    """The type's START payload model refuses the payload; the message names the fields,
    never their values."""

    code = ErrorCode.MALFORMED_MESSAGE
    retryable = False

    def __init__(self, workflow_type: str, error: ValidationError) -> None:
        super().__init__(
            f"{workflow_type} START payload: {summarise(error)}",
            hint="send what the type's START model declares",
        )
        self.workflow_type = workflow_type
