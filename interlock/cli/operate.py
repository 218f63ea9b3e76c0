"""Operator commands: `signal` (any event a workflow's type declares) and its shorthands
approve, reject, cancel and retry — each a signal message whose decision by the projector is
awaited and printed (exit 3 when refused or dead-lettered).

One factory makes them all: they differ in the event they send, the role they sign in by
default, and the options of their own. The payload is the type's: the event's payload model
(of the definition version the workflow is pinned to) is filled with what the workflow shows
and the operator's `--payload`/`--field` values, and checked before anything is sent (exit 2,
one line); see `interlock.ops.signal_payloads`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from inspect import Parameter, Signature
from typing import Annotated, Any

import typer

from interlock.app import terminal
from interlock.app.options import JsonOpt, TenantOpt, with_stack
from interlock.cli import selecting
from interlock.cli.bulk import usage
from interlock.config import access
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.envelope import Actor
from interlock.contracts.errors import UnknownDefinition
from interlock.ops.commands import send_and_wait
from interlock.ops.errors import InvalidSignal
from interlock.ops.signal_payloads import default_role, given_values, payload_for

Values = dict[str, Any]
Own = Callable[..., tuple[Values, Values]]
"""`own(**options)`: from a command's own options, the payload values it gives (they win over
what the workflow shows) and the defaults it offers (used where the model has the field)."""
APPROVER_ID = "cli-approver"
OPERATOR_ID = "cli-operator"


def option(name: str, annotation: Any, default: Any = None) -> Parameter:
    """A keyword option of a signal command (`annotation` carries its `typer.Option`)."""
    return Parameter(name, Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def _nothing(**_: Any) -> tuple[Values, Values]:
    return {}, {}


def signal_command(
    name: str,
    event_type: str | None,
    doc: str,
    sender_id: str,
    *,
    own: Own = _nothing,
    options: Sequence[Parameter] = (),
    selectable: bool = False,
) -> Callable[..., None]:
    """The command `name`: send `event_type` (None: the command's EVENT argument) to a
    workflow as `--as`/`--role` (by default `sender_id`, in the type's default role for the
    event), its payload checked against the event's model, and report the decision.
    `selectable`: instead of an id it may take a selection (`--type …`, see
    `interlock.cli.selecting`), whose `--reason` then selects by reason."""

    def command(
        workflow_id: str | None,
        *,
        payload_json: str | None,
        fields: list[str] | None,
        actor: str,
        role: str | None,
        tenant: str | None,
        json_output: bool,
        event: str = "",
        **chosen: Any,
    ) -> None:
        sent = event_type or event
        picked = {k: chosen.pop(k) for k in selecting.SELECTION if k in chosen}
        if picked.get("workflow_type") is not None:
            if workflow_id is not None:
                raise usage("give a workflow id or a selection (--type), not both")
            selecting.signal_selection(
                name,
                sent,
                picked,
                reason=chosen.get("reason"),
                payload_json=payload_json,
                fields=fields,
                signing={"actor": actor, "role": role, "tenant": tenant, "json": json_output},
            )
            return
        if workflow_id is None:
            raise usage("give a workflow id, or a selection with --type")
        given_selection = [k for k, v in picked.items() if v and k != "pace"]
        if selects_by_reason and chosen.pop("reason", None):
            given_selection.append("reason")
        if given_selection:
            options = ", ".join(f"--{_FLAG.get(k, k).replace('_', '-')}" for k in given_selection)
            raise usage(f"{options}: select workflows, so only with --type (not with an id)")
        try:
            given, defaults = own(**chosen)
            given = {**given, **given_values(payload_json, fields or ())}
        except InvalidSignal as exc:
            report({"accepted": False, "reason": "invalid_signal", "detail": str(exc)}, json_output)
            return
        outcome = with_stack(
            lambda s, n, d: send_and_wait(
                access.as_client(s, n, access.OPERATOR),
                d,
                workflow_id,
                sent,
                payload=lambda view: payload_for(
                    _definition(view), view, sent, given=given, defaults=defaults
                ),
                actor=lambda view: Actor(id=actor, role=role or _role(s, view, sent)),
                tenant_id=tenant,
                admin_url=n,
            )
        )
        report(outcome, json_output)

    command.__name__ = command.__qualname__ = name
    command.__doc__ = doc
    event_argument = [] if event_type else [_EVENT]
    has_reason = any(o.name == "reason" for o in options)
    selects_by_reason = selectable and not has_reason
    selection = selecting.selection_options(with_reason=not has_reason) if selectable else []
    # Typer reads a command's arguments and options from its signature: this one's.
    vars(command)["__signature__"] = Signature(
        [
            Parameter(
                "workflow_id",
                Parameter.POSITIONAL_OR_KEYWORD,
                annotation=_OPTIONAL_ID if selectable else str,
                **({"default": None} if selectable else {}),
            ),
            *event_argument,
            *options,
            *selection,
            option("payload_json", _PAYLOAD, None),
            option("fields", _FIELD, None),
            option("actor", _ACTOR, sender_id),
            option("role", _ROLE, None),
            option("tenant", TenantOpt, None),
            option("json_output", JsonOpt, False),
        ]
    )
    return command


_FLAG = {"states": "state"}
_OPTIONAL_ID = Annotated[
    str | None, typer.Argument(help="The workflow (or select several with --type).")
]


def _definition(view: dict[str, Any]) -> WorkflowDefinition:
    """The definition the workflow is pinned to (its type's plugin must be installed)."""
    try:
        return installed().registry.get(view["workflow_type"], view["definition_version"])
    except UnknownDefinition as exc:
        raise InvalidSignal(str(exc)) from None


def _role(settings: Settings | None, view: dict[str, Any], event: str) -> str:
    """The type's default role for `event`, with this deployment's parameter overrides."""
    definition = _definition(view)
    overrides = settings.parameters.get(definition.workflow_type, {}) if settings else {}
    return default_role({**definition.parameters, **overrides}, event)


def report(outcome: dict[str, Any], json_output: bool) -> None:
    if outcome.get("caution") and not json_output:
        terminal.errors.print(f"[yellow]caution:[/] {outcome['caution']}")
    if json_output:
        terminal.print_json(outcome)
    elif outcome.get("accepted"):
        terminal.console.print(f"accepted: {outcome['from_state']} -> {outcome['to_state']}")
    else:
        reason = str(outcome.get("reason") or "").replace("_", " ")
        failed = outcome.get("failed_guards")
        guards = f"; failed guards: {', '.join(failed)}" if failed else ""
        terminal.errors.print(f"[red]{reason}[/]: {outcome.get('detail')}{guards}", soft_wrap=True)
    if not outcome.get("accepted"):
        usage = {
            "no_decision": 1,
            "queued": 1,
            "not_sent": 1,
            "ambiguous_workflow": 2,
            "invalid_signal": 2,
        }
        raise typer.Exit(usage.get(outcome.get("reason") or "", 3))


def _amount(value: str | None) -> str | None:
    """A positive decimal amount, refused here rather than dead-lettered by the projector."""
    try:
        ok = value is None or (Decimal(value).is_finite() and Decimal(value) > 0)
    except InvalidOperation:
        ok = False
    if not ok:
        raise typer.BadParameter(f"{value!r} is not a positive decimal amount, e.g. 20.00")
    return value


_EVENT = Parameter(
    "event",
    Parameter.POSITIONAL_OR_KEYWORD,
    annotation=Annotated[str, typer.Argument(help="The event, as the type declares it.")],
)
_PAYLOAD = Annotated[
    str | None,
    typer.Option("--payload", help="The payload as a JSON object (fields over the defaults)."),
]
_FIELD = Annotated[
    list[str] | None,
    typer.Option(
        "--field",
        help="KEY=VALUE, repeatable, over --payload (a VALUE starting with [ or { is JSON).",
    ),
]
_ACTOR = Annotated[str, typer.Option("--as", "--actor", help="Who signs the signal.")]
_ROLE = Annotated[
    str | None,
    typer.Option(help="The role signed in (default: the type's least-privileged for the event)."),
]
_VERSION = Annotated[
    int | None,
    typer.Option(min=1, help="Shorthand for --field recommendation_version=N (default: shown)."),
]
_AMOUNT = Annotated[
    str | None,
    typer.Option(help="Shorthand for --field amount=X (default: shown).", callback=_amount),
]
_REASON = Annotated[str, typer.Option(help="Why, for the audit trail.")]


def _approval(version: int | None, amount: str | None) -> tuple[Values, Values]:
    given = {"recommendation_version": version, "amount": amount}
    return {k: v for k, v in given.items() if v is not None}, {}


def _reasoned(reason: str) -> tuple[Values, Values]:
    """A reason is given where one is typed; else an empty one is offered to a model that
    has the field (and nothing to one that has not)."""
    return ({"reason": reason}, {}) if reason else ({}, {"reason": ""})


COMMANDS = [
    signal_command(
        "signal",
        None,
        "Send EVENT to a workflow, its payload checked against the event's model first.",
        OPERATOR_ID,
    ),
    signal_command(
        "approve",
        "APPROVED",
        "Approve what the workflow shows awaiting approval (the projector checks role, limit,"
        " version).",
        APPROVER_ID,
        own=_approval,
        options=[option("version", _VERSION), option("amount", _AMOUNT)],
    ),
    signal_command(
        "reject",
        "REJECTED_BY_REVIEWER",
        "Reject what awaits approval (or a workflow in manual review).",
        APPROVER_ID,
        own=_reasoned,
        options=[option("reason", _REASON, "")],
    ),
    signal_command(
        "cancel",
        "CANCEL_REQUESTED",
        "Request cancellation: immediate before the effect, reconciled first during it.",
        OPERATOR_ID,
        own=_reasoned,
        options=[option("reason", _REASON, "")],
        selectable=True,
    ),
    signal_command(
        "retry",
        "RETRY_REQUESTED",
        "Send a workflow in manual review back to the step that escalated.",
        OPERATOR_ID,
        selectable=True,
    ),
]
