"""`interlock migrate-workflow`: move one workflow to another definition version, as an
operator's explicit act.

The move is checked against the target definition's graph (`projector.engine.migrate`),
decided by the engine and committed as a transition would be: one statement writes the
checkpoint, an audit row naming the operator, the history's row (so a replay re-decides the
move), the jobs and timers of the state it enters. It commits only if the workflow is still at
the version it was checked at, so it never races the projector. A refused move prints its
reason and exits 3.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from interlock.app import terminal
from interlock.app.options import JsonOpt, TenantOpt, with_database
from interlock.cli import selecting
from interlock.cli.bulk import Mode, usage
from interlock.config import access
from interlock.config.settings import Settings
from interlock.contracts.envelope import Actor
from interlock.ops.migration import migrate


def migrate_workflow(
    workflow_id: Annotated[
        str | None, typer.Argument(help="The workflow (or select several with --type).")
    ] = None,
    *,
    to_version: Annotated[int, typer.Option(help="The definition version to move to.")],
    state: Annotated[
        list[str] | None,
        typer.Option(
            help="The state to move to (default: the current one); with --type, the states"
            " selected."
        ),
    ] = None,
    into: Annotated[
        str | None, typer.Option(help="The state to move to (default: the current one).")
    ] = None,
    actor: Annotated[
        str, typer.Option("--as", help="Operator id, for the audit.")
    ] = "cli-operator",
    tenant: TenantOpt = None,
    workflow_type: selecting.TypeSel = None,
    since: selecting.SinceSel = None,
    reason: selecting.ReasonSel = None,
    limit: selecting.LimitSel = None,
    dry_run: selecting.DryRunOpt = False,
    yes: selecting.YesOpt = False,
    pace: selecting.PaceOpt = 5.0,
    json_output: JsonOpt = False,
) -> None:
    """Move a workflow (or a selection, previewed first) to another definition version
    (checked, audited; exit 3 if refused)."""
    operator = Actor(id=actor, role=access.OPERATOR)
    if workflow_type is not None:
        if workflow_id is not None:
            raise usage("give a workflow id or a selection (--type), not both")
        chosen = selecting.chosen(
            workflow_type, states=state, tenant=tenant, since=since, reason=reason, limit=limit
        )
        mode = Mode(dry_run, yes, json_output, pace)
        selecting.bulk_migration(chosen, mode, to_version=to_version, state=into, operator=operator)
        return
    if workflow_id is None:
        raise usage("give a workflow id, or a selection with --type")
    if len(state or []) > 1:
        raise usage("--state: one state to move to")
    target = into or (state[0] if state else None)

    async def work(s: Settings, database_url: str) -> dict[str, Any]:
        return await migrate(
            s,
            database_url,
            workflow_id,
            to_version=to_version,
            state=target,
            tenant=tenant,
            operator=operator,
        )

    outcome = with_database(work)
    if json_output:
        terminal.print_json(outcome)
    elif outcome["accepted"]:
        terminal.console.print(
            f"migrated: v{outcome['from_version']} {outcome['from_state']} -> "
            f"v{outcome['to_version']} {outcome['state']}"
        )
    else:
        terminal.errors.print(f"[red]{outcome['reason']}[/]: {outcome['detail']}")
    if not outcome["accepted"]:
        raise typer.Exit(2 if outcome["reason"] == "ambiguous_workflow" else 3)
