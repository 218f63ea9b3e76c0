"""`interlock costs`: what model calls used and cost, by type, tenant, task, model or workflow."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.table import Table

from interlock.app import terminal
from interlock.app.options import JsonOpt, TypeOpt, usage_error, with_database
from interlock.config.durations import parse_duration
from interlock.config.settings import Settings
from interlock.ops import queries
from interlock.ops.model_costs import BY, By, costs


def costs_command(
    *,
    since: Annotated[
        str | None, typer.Option(help="Only calls committed within this duration (30m, 24h, 7d).")
    ] = None,
    by: Annotated[str, typer.Option(help=f"Group by: {', '.join(BY)}.")] = "type",
    workflow_type: TypeOpt = None,
    tenant: Annotated[str | None, typer.Option(help="Only this tenant's.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="At most N groups.")] = 100,
    json_output: JsonOpt = False,
) -> None:
    """Tokens and cost of the committed model calls, by type, tenant, task, model or workflow."""
    if by not in BY:
        usage_error(f"--by {by!r}: one of {', '.join(BY)}")
    try:
        after = datetime.now(UTC) - parse_duration(since) if since is not None else None
    except ValueError as exc:
        usage_error(str(exc))
    grouping: By = by

    async def work(_: Settings, database_url: str) -> dict[str, Any]:
        engine = queries.open_reader(database_url)
        try:
            return await costs(
                engine,
                by=grouping,
                since=after,
                workflow_type=workflow_type,
                tenant=tenant,
                limit=limit,
            )
        finally:
            await engine.dispose()

    report = with_database(work)
    terminal.print_json(report) if json_output else _print(report)


def _print(report: dict[str, Any]) -> None:
    table = Table(report["by"], "calls", "tokens in", "tokens out", "cost", box=None)
    for row in [*report["rows"], {"key": "total", **report["total"]}]:
        table.add_row(
            str(row["key"]),
            str(row["calls"]),
            str(row["tokens_in"]),
            str(row["tokens_out"]),
            f"{row['cost']:.6f}",
        )
    terminal.console.print(table)
