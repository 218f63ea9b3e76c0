"""Operator commands: approve, reject, cancel, retry — each a signal message whose
decision by the projector is awaited and printed (exit 3 when refused)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from interlock import console
from interlock.cli import JsonOpt, with_stack
from interlock.contracts.envelope import Actor


def register(app: typer.Typer) -> None:
    for command in (approve, reject, cancel, retry):
        app.command()(command)


def approve(
    workflow_id: str,
    *,
    version: Annotated[
        int | None, typer.Option(help="Recommendation version (default: current).")
    ] = None,
    amount: Annotated[
        str | None, typer.Option(help="Approved amount (default: the recommended one).")
    ] = None,
    actor: Annotated[str, typer.Option("--as", help="Approver id.")] = "cli-approver",
    role: Annotated[str, typer.Option(help="Approver role.")] = "support_approver",
    json_output: JsonOpt = False,
) -> None:
    """Approve the current recommendation (the projector checks role, limit, version)."""
    from interlock.signals import approval_payload

    _signal(
        workflow_id,
        "APPROVED",
        lambda v: approval_payload(v, version, amount),
        Actor(id=actor, role=role),
        json_output,
    )


def reject(
    workflow_id: str,
    *,
    reason: Annotated[str, typer.Option(help="Why, for the audit trail.")] = "",
    actor: Annotated[str, typer.Option("--as")] = "cli-approver",
    role: Annotated[str, typer.Option()] = "support_approver",
    json_output: JsonOpt = False,
) -> None:
    """Reject the recommendation awaiting approval (or a workflow in manual review)."""
    _signal(
        workflow_id,
        "REJECTED_BY_REVIEWER",
        lambda v: {"reason": reason},
        Actor(id=actor, role=role),
        json_output,
    )


def cancel(
    workflow_id: str,
    *,
    reason: Annotated[str, typer.Option()] = "",
    actor: Annotated[str, typer.Option("--as")] = "cli-operator",
    role: Annotated[str, typer.Option()] = "operator",
    json_output: JsonOpt = False,
) -> None:
    """Request cancellation: immediate before the effect, reconciled first during it."""
    _signal(
        workflow_id,
        "CANCEL_REQUESTED",
        lambda v: {"reason": reason},
        Actor(id=actor, role=role),
        json_output,
    )


def retry(
    workflow_id: str,
    actor: Annotated[str, typer.Option("--as")] = "cli-operator",
    role: Annotated[str, typer.Option()] = "operator",
    json_output: JsonOpt = False,
) -> None:
    """Send a workflow in manual review back to the step that escalated."""
    _signal(
        workflow_id,
        "RETRY_REQUESTED",
        lambda v: {},
        Actor(id=actor, role=role),
        json_output=json_output,
    )


def _signal(
    workflow_id: str,
    event_type: str,
    payload: Callable[[dict[str, Any]], dict[str, Any]],
    actor: Actor,
    json_output: bool,
) -> None:
    from interlock.commands import send_and_wait

    outcome = with_stack(
        lambda s, n, d: send_and_wait(n, d, workflow_id, event_type, payload=payload, actor=actor)
    )
    if json_output:
        console.print_json(outcome)
    elif outcome.get("accepted"):
        console.console.print(f"accepted: {outcome['from_state']} -> {outcome['to_state']}")
    else:
        console.errors.print(f"[red]{outcome.get('reason')}[/]: {outcome.get('detail')}")
    if not outcome.get("accepted"):
        raise typer.Exit(1 if outcome.get("reason") == "no_decision" else 3)
