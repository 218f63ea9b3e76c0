"""External clients: who may publish requests or signals, for which workflow types, tenants
and actor roles. Server-side configuration (`INTERLOCK_CLIENTS`), never taken from a message:
the broker lets a client publish only on subjects carrying its own name, and the projector
checks what the message claims against its client's policy."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

ANY = "*"
"""In `types` or `tenants`: every one."""

ClientName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
"""A client's name is a subject token (`wf.in.request.<type>.<client>`) and its NATS user."""

Publishes = Literal["request", "signal"]

GATEWAY = "gateway"
"""The approval/webhook gateway's client name (the sender token of what it publishes), its
NATS user and its component's name: the one client whose messages speak for relayed senders."""

SENDER_PATTERN = r"^[A-Za-z0-9_]{1,64}$"
"""A relayed sender's name (a gateway webhook sender): no `-`, so the event id
`gw-<sender>-<webhook-id>` names exactly one sender whatever the webhook id holds."""
SenderName = Annotated[str, StringConstraints(pattern=SENDER_PATTERN)]
RELAYED_PREFIX = "gw-"


def relayed_event_id(sender: str, webhook_id: str) -> str:
    """The event id of a relayed sender's message: the same webhook is the same event."""
    return f"{RELAYED_PREFIX}{sender}-{webhook_id}"


def relayed_sender(event_id: str) -> str | None:
    """The sender a relayed event id names (None: it names none)."""
    if not event_id.startswith(RELAYED_PREFIX):
        return None
    sender, dash, _ = event_id.removeprefix(RELAYED_PREFIX).partition("-")
    return sender if dash and re.fullmatch(SENDER_PATTERN, sender) else None


class SenderGrant(BaseModel):
    """What one sender behind a relaying client (the gateway) may claim: its own tenants,
    workflow types, actor roles and actor ids, not what the relay's senders together may."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenants: frozenset[str]
    roles: frozenset[str]
    actors: frozenset[str]
    types: frozenset[str] = frozenset({ANY})

    def admits_tenant(self, tenant_id: str) -> bool:
        return ANY in self.tenants or tenant_id in self.tenants

    def admits_type(self, workflow_type: str) -> bool:
        return ANY in self.types or workflow_type in self.types

    def admits_actor(self, actor_id: str, role: str) -> bool:
        return role in self.roles and (ANY in self.actors or actor_id in self.actors)


class ClientPolicy(BaseModel):
    """What one client may send."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    publish: frozenset[Publishes] = Field(description="Kinds of message: request, signal.")
    types: frozenset[str] = Field(description='Workflow types, or ["*"] for all.')
    tenants: frozenset[str] = Field(description='Tenants, or ["*"] for all.')
    roles: frozenset[str] = Field(
        default=frozenset(), description="Actor roles its signals may carry."
    )
    senders: dict[SenderName, SenderGrant] | None = Field(
        default=None,
        description="A relaying client (the gateway): each message is checked against the "
        "grant of the one sender its event id names (`gw-<sender>-…`), never the union.",
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
