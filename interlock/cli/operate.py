"""Operator commands: approve, reject, cancel, retry — each a signal message whose
decision by the projector is awaited and printed (exit 3 when refused).

One factory makes all four: they differ only in the event they send, the actor they send it
as by default, and the options their payload is made of."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from inspect import Parameter, Signature
from typing import Annotated, Any

import typer

from interlock import access, terminal
from interlock.commands import send_and_wait
from interlock.contracts.envelope import Actor
from interlock.options import JsonOpt, TenantOpt, with_stack
from interlock.signals import approval_payload, no_payload, reason_payload

Payload = Callable[..., dict[str, Any]]
"""`payload(view, **options)`: the signal's payload, from the workflow's view and the values
of the command's own options."""
APPROVER = Actor(id="cli-approver", role="support_approver")
OPERATOR = Actor(id="cli-operator", role="operator")


def option(name: str, annotation: Any, default: Any = None) -> Parameter:
    """A keyword option of a signal command (`annotation` carries its `typer.Option`)."""
    return Parameter(name, Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def signal_command(
    name: str,
    event_type: str,
    doc: str,
    sender: Actor,
    *,
    payload: Payload,
    options: Sequence[Parameter] = (),
    actor_help: str | None = None,
    role_help: str | None = None,
) -> Callable[..., None]:
    """The command `name`: send `event_type` to a workflow as `--as`/`--role` (by default
    `sender`), its payload made by `payload` from `options`, and report the decision."""

    def command(
        workflow_id: str,
        *,
        actor: str,
        role: str,
        tenant: str | None,
        json_output: bool,
        **chosen: Any,
    ) -> None:
        outcome = with_stack(
            lambda s, n, d: send_and_wait(
                access.as_client(s, n, access.OPERATOR),
                d,
                workflow_id,
                event_type,
                payload=lambda view: payload(view, **chosen),
                actor=Actor(id=actor, role=role),
                tenant_id=tenant,
                admin_url=n,
            )
        )
        report(outcome, json_output)

    command.__name__ = command.__qualname__ = name
    command.__doc__ = doc
    # Typer reads a command's arguments and options from its signature: this one's.
    vars(command)["__signature__"] = Signature(
        [
            Parameter("workflow_id", Parameter.POSITIONAL_OR_KEYWORD, annotation=str),
            *options,
            option("actor", Annotated[str, typer.Option("--as", help=actor_help)], sender.id),
            option("role", Annotated[str, typer.Option(help=role_help)], sender.role),
            option("tenant", TenantOpt, None),
            option("json_output", JsonOpt, False),
        ]
    )
    return command


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
        usage = {"no_decision": 1, "queued": 1, "ambiguous_workflow": 2}
        raise typer.Exit(usage.get(outcome.get("reason") or "", 3))


def _reason(help_text: str | None = None) -> Parameter:
    return option("reason", Annotated[str, typer.Option(help=help_text)], "")


def _amount(value: str | None) -> str | None:
    """A positive decimal amount, refused here rather than dead-lettered by the projector."""
    try:
        ok = value is None or (Decimal(value).is_finite() and Decimal(value) > 0)
    except InvalidOperation:
        ok = False
    if not ok:
        raise typer.BadParameter(f"{value!r} is not a positive decimal amount, e.g. 20.00")
    return value


_VERSION = Annotated[
    int | None, typer.Option(min=1, help="Recommendation version (default: current).")
]
_AMOUNT = Annotated[
    str | None,
    typer.Option(help="Approved amount (default: the recommended one).", callback=_amount),
]

COMMANDS = [
    signal_command(
        "approve",
        "APPROVED",
        "Approve the current recommendation (the projector checks role, limit, version).",
        APPROVER,
        payload=approval_payload,
        options=[option("version", _VERSION), option("amount", _AMOUNT)],
        actor_help="Approver id.",
        role_help="Approver role.",
    ),
    signal_command(
        "reject",
        "REJECTED_BY_REVIEWER",
        "Reject the recommendation awaiting approval (or a workflow in manual review).",
        APPROVER,
        payload=reason_payload,
        options=[_reason("Why, for the audit trail.")],
    ),
    signal_command(
        "cancel",
        "CANCEL_REQUESTED",
        "Request cancellation: immediate before the effect, reconciled first during it.",
        OPERATOR,
        payload=reason_payload,
        options=[_reason()],
    ),
    signal_command(
        "retry",
        "RETRY_REQUESTED",
        "Send a workflow in manual review back to the step that escalated.",
        OPERATOR,
        payload=no_payload,
    ),
]
