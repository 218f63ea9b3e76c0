"""External clients: who may publish requests or signals, for which workflow types, tenants
and actor roles. Server-side configuration (`INTERLOCK_CLIENTS`), never taken from a message:
the broker lets a client publish only on subjects carrying its own name, and the projector
checks what the message claims against its client's policy."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

ANY = "*"
"""In `types` or `tenants`: every one."""

ClientName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
"""A client's name is a subject token (`wf.in.request.<type>.<client>`) and its NATS user."""

Publishes = Literal["request", "signal"]


class ClientPolicy(BaseModel):
    """What one client may send."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    publish: frozenset[Publishes] = Field(description="Kinds of message: request, signal.")
    types: frozenset[str] = Field(description='Workflow types, or ["*"] for all.')
    tenants: frozenset[str] = Field(description='Tenants, or ["*"] for all.')
    roles: frozenset[str] = Field(
        default=frozenset(), description="Actor roles its signals may carry."
    )

    def may_publish(self, kind: str) -> bool:
        return kind in self.publish

    def admits_type(self, workflow_type: str) -> bool:
        return ANY in self.types or workflow_type in self.types

    def admits_tenant(self, tenant_id: str) -> bool:
        return ANY in self.tenants or tenant_id in self.tenants

    def admits_role(self, role: str) -> bool:
        return role in self.roles

    def published_types(self, installed: Iterable[str]) -> list[str]:
        """The workflow types among `installed` this client may address, sorted."""
        return sorted(t for t in installed if self.admits_type(t))


def signing_roles(parameters: Mapping[str, Any]) -> set[str]:
    """The actor roles a definition's guards accept, read from its parameters: the keys of
    `approver_limits` and the members of every `*_roles` list."""
    roles = set((parameters.get("approver_limits") or {}).keys())
    for name, value in parameters.items():
        if name.endswith("_roles") and isinstance(value, list | tuple):
            roles |= {str(role) for role in value}
    return roles
