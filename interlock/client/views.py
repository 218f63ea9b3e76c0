"""What `interlock.Client` returns and raises: a frozen view of a workflow (as `interlock show
--json` shows it) and the refusals of a request that is not sent."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

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


class AuditEntry(BaseModel):
    """One decision about the workflow, in commit order."""

    model_config = ConfigDict(frozen=True, extra="allow")

    event_id: str
    event_type: str
    from_state: str | None
    to_state: str | None
    accepted: bool
    reason: str | None = None
    detail: str | None = None
    actor: dict[str, str | None] | None = None
    occurred_at: str | None = None


class WorkflowView(BaseModel):
    """A workflow as it stood when read (`interlock show --json`; further fields of that
    view stay available as extra attributes)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    workflow_id: str
    workflow_type: str
    tenant_id: str
    state: str
    version: int
    definition_version: int
    data: dict[str, Any]
    audit: tuple[AuditEntry, ...] = ()
