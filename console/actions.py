"""What an operator can do to a workflow from the console: the same signals, with the same
payloads, as the CLI's approve, reject, cancel and retry (plus request changes and resolve),
sent and awaited by the CLI's own `send_and_wait`.

An action is offered only where the workflow's table has a row for its event from the current
state (cancellation: where the state is cancellable), and only to an operator whose console
role allows it; the projector still decides, and its refusal is shown with its reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from interlock.access import as_operator
from interlock.commands import send_and_wait
from interlock.console.operators import (
    CAN_APPROVE,
    CAN_OPERATE,
    Operator,
    actor_role,
    approval_limit,
    parameters,
)
from interlock.contracts.envelope import Actor
from interlock.contracts.registry import Registry
from interlock.settings import ConsoleRole, Settings
from interlock.signals import (
    approval_payload,
    changes_payload,
    no_payload,
    reason_payload,
)

Payload = Callable[[dict[str, Any], str], dict[str, Any]]


@dataclass(frozen=True)
class Action:
    name: str
    label: str
    event: str
    allowed: frozenset[ConsoleRole]
    payload: Payload
    text: str | None = None
    """The name of the action's one free-text field (reason or feedback), if it has one."""

    @property
    def approving(self) -> bool:
        return self.event == "APPROVED"


ACTIONS = (
    Action(
        "approve",
        "Approve",
        "APPROVED",
        CAN_APPROVE,
        lambda view, _: approval_payload(view, None, None),
    ),
    Action("reject", "Reject", "REJECTED_BY_REVIEWER", CAN_APPROVE, reason_payload, "reason"),
    Action(
        "request_changes",
        "Request changes",
        "CHANGES_REQUESTED",
        CAN_APPROVE,
        changes_payload,
        "feedback",
    ),
    Action("retry", "Retry", "RETRY_REQUESTED", CAN_OPERATE, lambda view, _: no_payload(view)),
    Action("resolve", "Resolve", "RESOLVED", CAN_OPERATE, lambda view, _: no_payload(view)),
    Action("cancel", "Cancel", "CANCEL_REQUESTED", CAN_OPERATE, reason_payload, "reason"),
)
BY_NAME = {a.name: a for a in ACTIONS}


def offered(
    registry: Registry, view: dict[str, Any], operator: Operator | None = None
) -> list[Action]:
    """The actions the workflow's table allows from its state (for `operator`, if given)."""
    definition = registry.get(view["workflow_type"], view["definition_version"])
    state = view["state"]
    found = [
        a
        for a in ACTIONS
        if definition.transitions_from(state, a.event)
        or (a.event == "CANCEL_REQUESTED" and state in definition.cancellable_states)
    ]
    return [a for a in found if operator is None or operator.may(a.allowed)]


def signer(
    settings: Settings,
    registry: Registry,
    view: dict[str, Any],
    operator: Operator,
    action: Action,
) -> Actor:
    """The actor the signal carries: the operator, in the role their configuration gives them
    for this workflow type."""
    params = parameters(settings, registry, view["workflow_type"], view["definition_version"])
    return Actor(id=operator.name, role=actor_role(operator, params, approving=action.approving))


def limit_of(
    settings: Settings, registry: Registry, view: dict[str, Any], operator: Operator
) -> str | None:
    """The amount the operator may approve on this workflow, if their role is limited."""
    params = parameters(settings, registry, view["workflow_type"], view["definition_version"])
    return approval_limit(params, actor_role(operator, params, approving=True))


async def perform(
    settings: Settings,
    urls: tuple[str, str],
    view: dict[str, Any],
    operator: Operator,
    action: Action,
    *,
    registry: Registry,
    text: str,
) -> dict[str, Any]:
    """Send the action's signal as `operator` and wait (bounded) for the projector's decision."""
    nats_url, database_url = urls
    return await send_and_wait(
        as_operator(settings, nats_url),
        database_url,
        view["workflow_id"],
        action.event,
        payload=lambda current: action.payload(current, text),
        actor=signer(settings, registry, view, operator, action),
        tenant_id=view["tenant_id"],
    )
