"""What an operator can do to a workflow from the console, for any workflow type: the same
signals as the CLI's approve, reject, cancel and retry (plus request changes and resolve),
their payloads made from the event's payload model as the CLI makes them, sent and awaited by
the CLI's own `send_and_wait`.

An action is offered only where the workflow's definition declares its event as a signal and
its table has a row for it from the current state (cancellation: where the state is
cancellable), and only to an operator whose console role allows it; its form is built from the
payload model (see `signal_forms`). The projector still decides, and its refusal — or the dead
letter it made of the signal — is shown with its reason.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from interlock.config.access import as_operator
from interlock.config.settings import ConsoleRole, Settings
from interlock.console.operators import (
    CAN_APPROVE,
    CAN_OPERATE,
    Operator,
    actor_role,
    approval_limit,
    parameters,
)
from interlock.console.presenting import redact
from interlock.console.signal_forms import FormField, form_fields, submitted
from interlock.contracts.effects import COMPENSATE_EVENT, CONFIRM_EVENT, RERUN_EVENT
from interlock.contracts.envelope import Actor
from interlock.contracts.registry import Registry
from interlock.ops.commands import send_and_wait
from interlock.ops.errors import InvalidSignal
from interlock.ops.signal_payloads import payload_for, signal_model

log = logging.getLogger("interlock.console")


@dataclass(frozen=True)
class Action:
    name: str
    label: str
    event: str
    allowed: frozenset[ConsoleRole]

    @property
    def approving(self) -> bool:
        return self.event == "APPROVED"


@dataclass(frozen=True)
class Form:
    """An offered action as the page renders it: its button and its inputs."""

    name: str
    label: str
    fields: tuple[FormField, ...]


ACTIONS = (
    Action("approve", "Approve", "APPROVED", CAN_APPROVE),
    Action("reject", "Reject", "REJECTED_BY_REVIEWER", CAN_APPROVE),
    Action("request_changes", "Request changes", "CHANGES_REQUESTED", CAN_APPROVE),
    Action("retry", "Retry", "RETRY_REQUESTED", CAN_OPERATE),
    Action("resolve", "Resolve", "RESOLVED", CAN_OPERATE),
    Action("cancel", "Cancel", "CANCEL_REQUESTED", CAN_OPERATE),
    # recovery of an effect whose outcome is unknown (`interlock effect`)
    Action("confirm_effect", "Confirm effect", CONFIRM_EVENT, CAN_OPERATE),
    Action("rerun_effect", "Re-run effect", RERUN_EVENT, CAN_OPERATE),
    Action("compensate", "Compensate", COMPENSATE_EVENT, CAN_OPERATE),
)
BY_NAME = {a.name: a for a in ACTIONS}


def offered(
    registry: Registry, view: dict[str, Any], operator: Operator | None = None
) -> list[Action]:
    """The actions the workflow's table allows from its state (for `operator`, if given)."""
    definition = registry.get(view["workflow_type"], view["definition_version"])
    state = view["state"]
    signals = {e.name for e in definition.events if e.source == "signal"}
    found = [
        a
        for a in ACTIONS
        if a.event in signals
        and (
            definition.transitions_from(state, a.event)
            or (a.event == "CANCEL_REQUESTED" and state in definition.cancellable_states)
        )
    ]
    return [a for a in found if operator is None or operator.may(a.allowed)]


def forms(
    registry: Registry,
    view: dict[str, Any],
    actions: list[Action],
    redacted: frozenset[str] = frozenset(),
) -> list[Form]:
    """The forms of `actions` on the workflow's page, with what the page shows bound in. A
    value the page redacts is not put in the page: the signal takes it from the workflow."""
    definition = registry.get(view["workflow_type"], view["definition_version"])

    def shown(field: FormField) -> bool:
        return not field.hidden or redact({field.name: field.value}, redacted) == {
            field.name: field.value
        }

    return [
        Form(a.name, a.label, tuple(filter(shown, form_fields(definition, view, a.event))))
        for a in actions
    ]


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


def unbound_fields(
    registry: Registry,
    view: dict[str, Any],
    action: Action,
    given: Mapping[str, Any],
    redacted: frozenset[str],
) -> list[str]:
    """The values the action's form on the workflow's page carries hidden (what the page
    showed) that the posted `given` values lack."""
    (page_form,) = forms(registry, view, [action], redacted)
    return [f.name for f in page_form.fields if f.hidden and f.name not in given]


async def perform(
    settings: Settings,
    urls: tuple[str, str],
    view: dict[str, Any],
    operator: Operator,
    action: Action,
    *,
    registry: Registry,
    form: Mapping[str, Any],
) -> dict[str, Any]:
    """Send the action's signal as `operator`, its payload the posted `form`'s values over
    what the workflow shows, and wait (bounded) for the projector's decision; a dead letter
    is read as the console itself (`nats_url`'s identity may read them). A form without a
    value its page showed bound in (a recommendation version, an amount) is refused
    (`unbound_form`) and nothing is sent."""
    nats_url, database_url = urls
    definition = registry.get(view["workflow_type"], view["definition_version"])
    try:
        given = submitted(signal_model(definition, action.event), form)
    except InvalidSignal as exc:
        return {"accepted": False, "reason": "invalid_signal", "detail": str(exc)}
    unbound = unbound_fields(registry, view, action, given, settings.console_redact)
    if unbound:  # it would approve whatever the workflow shows now, not what the page did
        detail = f"the form does not carry the {', '.join(unbound)} its page showed: reload it"
        where = f"{view['tenant_id']}/{view['workflow_id']}"
        log.warning(
            "console %s of %s by %s refused: %s", action.event, where, operator.name, detail
        )
        return {"accepted": False, "reason": "unbound_form", "detail": detail}
    return await send_and_wait(
        as_operator(settings, nats_url),
        database_url,
        view["workflow_id"],
        action.event,
        payload=lambda current: payload_for(definition, current, action.event, given=given),
        actor=signer(settings, registry, view, operator, action),
        tenant_id=view["tenant_id"],
        letters_url=nats_url,
    )
