"""What `interlock.Client` returns and raises: a frozen view of a workflow (as `interlock show
--json` shows it) and the refusals of a request that is not sent."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
    data: dict[str, object]
    audit: tuple[AuditEntry, ...] = ()
