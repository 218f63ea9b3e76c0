"""`interlock effect confirm|rerun|compensate ID`: recovering an effect whose outcome is
unknown, for any workflow type whose definition has the recovery events.

Each is an operator's signal (`interlock signal` with the event named for it), its payload
checked against the event's model before it is sent, decided by the projector against the
table (whose guards require the effect's outcome to be unknown, or for `compensate` to stand
or be unknown) and audited like any other. Each prints first, as a caution, the idempotency
key to ask the provider about.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from interlock.cli.operate import OPERATOR_ID, option, signal_command
from interlock.contracts.effects import COMPENSATE_EVENT, CONFIRM_EVENT, RERUN_EVENT
from interlock.signal_payloads import json_object

app = typer.Typer(
    help="Recover an effect whose outcome is unknown: confirm, re-run or compensate it.",
    no_args_is_help=True,
)
Values = dict[str, Any]
_RECEIPT = Annotated[
    str,
    typer.Option(help="The receipt found at the provider, as a JSON object (the result's shape)."),
]
_REASON = Annotated[str, typer.Option(help="Why, for the audit trail.")]


def _receipt(receipt: str) -> tuple[Values, Values]:
    return json_object(receipt, "--receipt"), {}


def _noted(reason: str) -> tuple[Values, Values]:
    return ({"note": reason}, {}) if reason else ({}, {})


for name, event, doc, own, options in (
    (
        "confirm",
        CONFIRM_EVENT,
        "Record the receipt found at the provider: the workflow continues as executed.",
        _receipt,
        [option("receipt", _RECEIPT, ...)],
    ),
    (
        "rerun",
        RERUN_EVENT,
        "Run the effect again under the same idempotency key (its stage reconciles first).",
        _noted,
        [option("reason", _REASON, "")],
    ),
    (
        "compensate",
        COMPENSATE_EVENT,
        "Reverse the effect (found by its key first when its outcome is unknown).",
        _noted,
        [option("reason", _REASON, "")],
    ),
):
    app.command(name=name)(signal_command(name, event, doc, OPERATOR_ID, own=own, options=options))
