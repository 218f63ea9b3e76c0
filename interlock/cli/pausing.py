"""`interlock pause|resume --type T [--tenant X] [--workflow ID]` and `interlock paused`.

A paused scope keeps accepting and recording its events; what its decisions would send (jobs,
announcements) is held back, and its timers wait, until it is resumed
(`projector.store.pauses`). Both are audited in the operator's log.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from interlock.app import terminal
from interlock.app.options import JsonOpt, with_database
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.urls import asyncpg_dsn
from interlock.projector.store import pauses
from interlock.projector.store.operator_log import opened

TypeOpt = Annotated[str, typer.Option("--type", help="The workflow type.")]
ScopeTenantOpt = Annotated[str | None, typer.Option("--tenant", help="Only this tenant.")]
WorkflowOpt = Annotated[str | None, typer.Option("--workflow", help="Only this workflow.")]
OperatorOpt = Annotated[str, typer.Option("--as", help="Operator id, for the audit.")]


def _scope(workflow_type: str, tenant: str | None, workflow: str | None) -> pauses.Scope:
    if workflow_type not in {d.workflow_type for d in installed().registry}:
        terminal.errors.print(f"[red]unknown workflow type[/]: {workflow_type}")
        raise typer.Exit(2)
    return pauses.Scope(workflow_type, tenant or "", workflow or "")


def _on_database(work: Any) -> Any:
    async def run(_s: Settings, database_url: str) -> Any:
        async with opened(asyncpg_dsn(database_url)) as connection:
            return await work(connection)

    return with_database(run)


def _describe(scope: pauses.Scope) -> str:
    where = f" tenant {scope.tenant_id}" if scope.tenant_id else ""
    return (
        scope.workflow_type
        + where
        + (f" workflow {scope.workflow_id}" if scope.workflow_id else "")
    )


def pause(
    *,
    workflow_type: TypeOpt,
    tenant: ScopeTenantOpt = None,
    workflow: WorkflowOpt = None,
    reason: Annotated[str, typer.Option(help="Why, for the audit.")] = "",
    actor: OperatorOpt = "cli-operator",
    json_output: JsonOpt = False,
) -> None:
    """Pause a type, a tenant or one workflow: events are recorded, nothing is dispatched."""
    scope = _scope(workflow_type, tenant, workflow)
    created = _on_database(lambda c: pauses.pause(c, scope, actor, reason))
    if json_output:
        terminal.print_json({"paused": True, "new": created, **scope.selection()})
    else:
        state = "paused" if created else "already paused"
        terminal.console.print(f"{state}: {_describe(scope)}", markup=False)


def resume(
    *,
    workflow_type: TypeOpt,
    tenant: ScopeTenantOpt = None,
    workflow: WorkflowOpt = None,
    actor: OperatorOpt = "cli-operator",
    json_output: JsonOpt = False,
) -> None:
    """Resume a paused scope (and every pause inside it): held jobs go out in order, timers
    that fell due meanwhile fire. Exit 1 if nothing in the scope was paused."""
    scope = _scope(workflow_type, tenant, workflow)

    async def work(connection: Any) -> dict[str, Any]:
        lifted, released = await pauses.resume(connection, scope, actor)
        still = [p for p in await pauses.paused(connection) if _covers(p, scope)]
        return {"resumed": lifted, "released": released, "still_paused_by": still}

    outcome = _on_database(work)
    if json_output:
        terminal.print_json(outcome)
    elif outcome["resumed"]:
        terminal.console.print(
            f"resumed: {_describe(scope)} ({outcome['released']} held message(s) released)",
            markup=False,
        )
    for p in outcome["still_paused_by"]:
        terminal.errors.print(
            f"still paused by {p['workflow_type']} {p['tenant_id'] or '(every tenant)'}",
            markup=False,
        )
    if not outcome["resumed"]:
        if not json_output:
            terminal.errors.print(f"nothing paused in {_describe(scope)}", markup=False)
        raise typer.Exit(1)


def _covers(pause_row: dict[str, Any], scope: pauses.Scope) -> bool:
    """Whether `pause_row` (a broader pause) still covers `scope` after it was resumed."""
    return pause_row["workflow_type"] == scope.workflow_type and (
        pause_row["tenant_id"] in (None, scope.tenant_id or None)
        and pause_row["workflow_id"] in (None, scope.workflow_id or None)
    )


def paused(json_output: JsonOpt = False) -> None:
    """What is paused, since when, by whom, and how many messages each pause holds back."""
    found = _on_database(pauses.paused)
    if json_output:
        terminal.print_json({"paused": found})
        return
    if not found:
        terminal.console.print("nothing is paused")
    for p in found:
        terminal.console.print(
            f"{p['workflow_type']:<16} {p['tenant_id'] or '*':<16} {p['workflow_id'] or '*':<28} "
            f"since {p['paused_at']} by {p['paused_by']}  held {p['held']}  {p['reason']}",
            markup=False,
            highlight=False,
        )
