"""Looking at workflows: one workflow (`show`), its causal tree (`trace`), listings (`list`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer

from interlock.app import terminal
from interlock.app.options import (
    JsonOpt,
    TenantOpt,
    TypeOpt,
    known_states,
    load_settings,
    one_of,
    with_stack,
)
from interlock.config.plugins import installed
from interlock.config.telemetry import traces_dir
from interlock.contracts.effectcheck import effects_view
from interlock.contracts.errors import UnknownDefinition
from interlock.contracts.model_calls import calls_view, spend_view
from interlock.ops import queries
from interlock.ops.errors import AmbiguousWorkflow
from interlock.ops.traceview import assemble, render

T = TypeVar("T")


def show(workflow_id: str, tenant: TenantOpt = None, json_output: JsonOpt = False) -> None:
    """A workflow's state, versions, data and its full audit history."""
    view = with_effects(_view(workflow_id, tenant))
    terminal.print_json(view) if json_output else terminal.workflow(view)


def with_effects(view: dict[str, Any]) -> dict[str, Any]:
    """`view` with `effects`: the status and key of each effect its definition declares; and
    `model_calls`, every model call in order, with `model_spend`, their totals."""
    execution = view.get("execution") or {}
    view = {
        **view,
        "model_calls": calls_view(execution, view.get("data") or {}),
        "model_spend": spend_view(execution),
    }
    try:
        definition = installed().registry.get(view["workflow_type"], view["definition_version"])
    except UnknownDefinition:
        return {**view, "effects": []}
    return {**view, "effects": effects_view(definition, execution)}


def trace(workflow_id: str, tenant: TenantOpt = None, json_output: JsonOpt = False) -> None:
    """A workflow's causal tree: every hop, its duration, states and refusals."""
    s = load_settings()
    view = _view(workflow_id, tenant)
    tree = assemble(view, traces_dir(s))
    tree["model_calls"] = calls_view(view.get("execution") or {}, view.get("data") or {})
    if json_output:
        terminal.print_json(tree)
        return
    if not tree["spans"]:
        ids = ", ".join(tree["trace_ids"]) or "none recorded"
        terminal.errors.print(
            f"no local spans for this workflow (INTERLOCK_LOCAL_TRACES off, or "
            f"another host); look up trace {ids} in Jaeger"
        )
        raise typer.Exit(1)
    terminal.console.print(f"trace {tree['trace_id']} ({len(tree['spans'])} spans)")
    for line in render(tree):
        terminal.console.print(line, markup=False, highlight=False)
    for line in terminal.model_call_lines(tree["model_calls"]):
        terminal.console.print(line, markup=False, highlight=False, soft_wrap=True)


def list_workflows(
    *,
    state: Annotated[
        str | None,
        typer.Option(help="Only workflows in this state.", callback=one_of(known_states, "state")),
    ] = None,
    workflow_type: TypeOpt = None,
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 50,
    json_output: JsonOpt = False,
) -> None:
    """Workflows, newest first."""
    rows = with_stack(
        lambda s, n, d: _query(
            d,
            queries.workflow_list,
            state=state,
            workflow_type=workflow_type,
            tenant_id=tenant,
            limit=limit,
        )
    )
    terminal.print_json(rows) if json_output else terminal.workflows(rows)


def _view(workflow_id: str, tenant: str | None) -> dict[str, Any]:
    """The workflow's view; exit 1 when there is no such workflow, 2 when several tenants
    use the id and none is named."""
    try:
        view = with_stack(lambda s, n, d: _query(d, queries.workflow_view, workflow_id, tenant))
    except AmbiguousWorkflow as exc:
        terminal.errors.print(f"[red]ambiguous:[/] {exc}")
        raise typer.Exit(2) from None
    if view is None:
        terminal.errors.print(f"no workflow {workflow_id}")
        raise typer.Exit(1)
    return view


async def _query(
    database_url: str, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any
) -> T:
    engine = queries.open_reader(database_url)
    try:
        return await fn(engine, *args, **kwargs)
    finally:
        await engine.dispose()
