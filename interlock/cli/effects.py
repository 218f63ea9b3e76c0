"""`interlock effect ID confirm|rerun|compensate`: recovering an effect whose outcome is
unknown, for any workflow type whose definition has the recovery events.

Each is an operator's signal the projector decides against the table (its guards require the
effect's outcome to be unknown, or for `compensate` to stand or be unknown), audited like any
other. Each prints first the idempotency key to ask the provider about.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from interlock import access, terminal
from interlock.cli.operate import OPERATOR, report
from interlock.commands import send_and_wait
from interlock.contracts.effects import COMPENSATE_EVENT, CONFIRM_EVENT, RERUN_EVENT
from interlock.contracts.envelope import Actor
from interlock.contracts.errors import ErrorCode, InterlockError, UnknownDefinition
from interlock.options import JsonOpt, TenantOpt, with_stack
from interlock.plugins import installed
from interlock.projector.engine.effects import effects_view

app = typer.Typer(
    help="Recover an effect whose outcome is unknown: confirm, re-run or compensate it.",
    no_args_is_help=True,
)
ActorOpt = Annotated[str, typer.Option("--as", help="Operator id, for the audit.")]
RoleOpt = Annotated[str, typer.Option(help="Operator role.")]
ReasonOpt = Annotated[str, typer.Option(help="Why, for the audit trail.")]


class Unsendable(InterlockError):
    """The command cannot be sent as given (one line, exit 2)."""

    code = ErrorCode.MALFORMED_MESSAGE
    retryable = False


def _unknown_keys(view: dict[str, Any]) -> list[str]:
    try:
        definition = installed().registry.get(view["workflow_type"], view["definition_version"])
    except UnknownDefinition:
        return []
    rows = effects_view(definition, view.get("execution") or {})
    return [
        f"{r['state']}: {r['status']}, idempotency key {r['idempotency_key'] or '(none recorded)'}"
        for r in rows
        if r["status"] != "none"
    ]


def _checked(view: dict[str, Any], event_type: str, payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` if the workflow's definition has `event_type` and its model accepts it."""
    try:
        definition = installed().registry.get(view["workflow_type"], view["definition_version"])
    except UnknownDefinition as exc:
        raise Unsendable(str(exc)) from None
    spec = definition.event(event_type)
    if spec is None:
        raise Unsendable(
            f"{view['workflow_type']} v{definition.version} has no {event_type}: its "
            "effects cannot be recovered this way (migrate the workflow to a version that can)"
        )
    if spec.payload is not None:
        try:
            spec.payload.model_validate(payload)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "payload"
            raise Unsendable(f"{event_type}: {where}: {first['msg']}") from None
    return payload


def _send(
    workflow_id: str,
    event_type: str,
    payload: dict[str, Any],
    *,
    actor: str,
    role: str,
    tenant: str | None,
    json_output: bool,
) -> None:
    def build(view: dict[str, Any]) -> dict[str, Any]:
        checked = _checked(view, event_type, payload)
        if not json_output:
            for line in _unknown_keys(view):
                terminal.errors.print(f"check first: {line}", markup=False, highlight=False)
        return checked

    try:
        outcome = with_stack(
            lambda s, n, d: send_and_wait(
                access.as_client(s, n, access.OPERATOR),
                d,
                workflow_id,
                event_type,
                payload=build,
                actor=Actor(id=actor, role=role),
                tenant_id=tenant,
                admin_url=n,
            )
        )
    except Unsendable as exc:
        terminal.errors.print(str(exc), markup=False, highlight=False)
        raise typer.Exit(2) from None
    report(outcome, json_output)


def _note(reason: str) -> dict[str, Any]:
    return {"note": reason} if reason else {}


@app.command()
def confirm(
    workflow_id: str,
    *,
    receipt: Annotated[
        str, typer.Option(help="The receipt found at the provider, as JSON (the result's shape).")
    ],
    actor: ActorOpt = OPERATOR.id,
    role: RoleOpt = OPERATOR.role,
    tenant: TenantOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Record the receipt found at the provider: the workflow continues as executed."""
    try:
        found = json.loads(receipt)
    except json.JSONDecodeError as exc:
        terminal.errors.print(f"--receipt is not JSON: {exc.msg} at {exc.pos}", markup=False)
        raise typer.Exit(2) from None
    if not isinstance(found, dict):
        terminal.errors.print("--receipt must be a JSON object", markup=False)
        raise typer.Exit(2)
    _send(
        workflow_id,
        CONFIRM_EVENT,
        found,
        actor=actor,
        role=role,
        tenant=tenant,
        json_output=json_output,
    )


def _by_operator(event_type: str, doc: str) -> Callable[..., None]:
    """A recovery command whose payload is only the operator's reason."""

    def command(
        workflow_id: str,
        *,
        reason: ReasonOpt = "",
        actor: ActorOpt = OPERATOR.id,
        role: RoleOpt = OPERATOR.role,
        tenant: TenantOpt = None,
        json_output: JsonOpt = False,
    ) -> None:
        _send(
            workflow_id,
            event_type,
            _note(reason),
            actor=actor,
            role=role,
            tenant=tenant,
            json_output=json_output,
        )

    command.__doc__ = doc
    return command


app.command(name="rerun")(
    _by_operator(
        RERUN_EVENT,
        "Run the effect again under the same idempotency key (its stage reconciles first).",
    )
)
app.command(name="compensate")(
    _by_operator(
        COMPENSATE_EVENT, "Reverse the effect (found by its key first when its outcome is unknown)."
    )
)
