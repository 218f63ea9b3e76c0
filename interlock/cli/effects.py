"""`interlock effect ID confirm|rerun|compensate`: recovering an effect whose outcome is
unknown, for any workflow type whose definition has the recovery events.

Each is an operator's signal (`interlock signal` with the event named for it), its payload
checked against the event's model before it is sent, decided by the projector against the
table (whose guards require the effect's outcome to be unknown, or for `compensate` to stand
or be unknown) and audited like any other. Each prints first, as a caution, the idempotency
key to ask the provider about.

The contract's form names the workflow first (`effect ID confirm --receipt JSON`); the older
`effect confirm ID` is read the same way: whichever of the two words is an action is the action.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from interlock.app import terminal
from interlock.app.options import JsonOpt, TenantOpt
from interlock.cli.operate import OPERATOR_ID, option, signal_command
from interlock.contracts.effects import COMPENSATE_EVENT, CONFIRM_EVENT, RERUN_EVENT
from interlock.ops.signal_payloads import json_object

Values = dict[str, Any]
_REASON = Annotated[str, typer.Option(help="Why, for the audit trail.")]


def _receipt(receipt: str | None, reason: str) -> tuple[Values, Values]:
    del reason  # a confirmation's reason is the receipt itself
    return json_object(receipt or "", "--receipt"), {}


def _noted(receipt: str | None, reason: str) -> tuple[Values, Values]:
    del receipt
    return ({"note": reason}, {}) if reason else ({}, {})


_OWN_OPTIONS = [option("receipt", str | None, None), option("reason", _REASON, "")]
ACTIONS: dict[str, Callable[..., None]] = {
    name: signal_command(name, event, doc, OPERATOR_ID, own=own, options=_OWN_OPTIONS)
    for name, event, doc, own in (
        (
            "confirm",
            CONFIRM_EVENT,
            "Record the receipt found at the provider: the workflow continues as executed.",
            _receipt,
        ),
        (
            "rerun",
            RERUN_EVENT,
            "Run the effect again under the same idempotency key (its stage reconciles first).",
            _noted,
        ),
        (
            "compensate",
            COMPENSATE_EVENT,
            "Reverse the effect (found by its key first when its outcome is unknown).",
            _noted,
        ),
    )
}
_WORDS = Annotated[
    list[str],
    typer.Argument(
        metavar="ID ACTION",
        help="The workflow and the action: confirm, rerun or compensate (`ACTION ID` works too).",
        show_default=False,
    ),
]
_RECEIPT = Annotated[
    str | None,
    typer.Option(help="confirm: the receipt found at the provider, as a JSON object."),
]
_PAYLOAD = Annotated[
    str | None, typer.Option("--payload", help="The payload as a JSON object (over the defaults).")
]
_FIELD = Annotated[list[str] | None, typer.Option("--field", help="KEY=VALUE, repeatable.")]
_ACTOR = Annotated[str, typer.Option("--as", "--actor", help="Who signs the signal.")]
_ROLE = Annotated[str | None, typer.Option(help="The role signed in (default: the type's).")]


def effect(
    words: _WORDS,
    *,
    receipt: _RECEIPT = None,
    reason: _REASON = "",
    payload_json: _PAYLOAD = None,
    fields: _FIELD = None,
    actor: _ACTOR = OPERATOR_ID,
    role: _ROLE = None,
    tenant: TenantOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Recover an effect whose outcome is unknown: `effect ID confirm --receipt JSON`,
    `effect ID rerun` or `effect ID compensate [--reason R]` (exit 0 accepted, 3 refused)."""
    workflow_id, action = _parse(words)
    if action == "confirm" and receipt is None:
        raise _usage("confirm needs --receipt JSON (the receipt found at the provider)")
    ACTIONS[action](
        workflow_id,
        payload_json=payload_json,
        fields=fields,
        actor=actor,
        role=role,
        tenant=tenant,
        json_output=json_output,
        receipt=receipt,
        reason=reason,
    )


def _parse(words: list[str]) -> tuple[str, str]:
    """(workflow id, action) from `ID ACTION` or `ACTION ID`."""
    if len(words) != 2:
        raise _usage("expected ID ACTION, e.g. `interlock effect wf-1 confirm --receipt '{...}'`")
    first, second = words
    if second in ACTIONS:
        return first, second
    if first in ACTIONS:
        return second, first
    raise _usage(f"unknown action {second!r}: expected one of {', '.join(ACTIONS)}")


def _usage(message: str) -> typer.Exit:
    """Print the one-line error; the caller raises the exit (2) returned."""
    terminal.errors.print(f"[red]error:[/] {message}", soft_wrap=True)
    return typer.Exit(2)
