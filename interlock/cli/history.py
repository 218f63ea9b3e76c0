"""Safe upgrades: re-deciding recorded histories with the installed definitions (`replay`, a
deploy gate) and moving one workflow to another definition version (`migrate-workflow`)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime
from typing import Annotated, Any

import typer

from interlock.app import terminal
from interlock.app.options import JsonOpt, TypeOpt, usage_error, with_database
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.registry import Registry
from interlock.projector.replay import Replayed, replay
from interlock.projector.store.histories import read_histories
from interlock.projector.store.records import HistoryRecord


def installed_registry() -> Registry:
    """The definitions and guards of the installed plugins (looked up at call time)."""
    return installed().registry


def replay_histories(
    *,
    workflow_type: TypeOpt = None,
    since: Annotated[
        str | None,
        typer.Option(help="Only workflows that decided an event at or after this ISO 8601 time."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Only the N most recently started workflows.")
    ] = None,
    json_output: JsonOpt = False,
) -> None:
    """Re-decide recorded histories with the installed definitions; exit 1 on a divergence."""
    registry = installed_registry()
    after = _time(since) if since is not None else None

    async def work(_: Settings, database_url: str) -> dict[str, Any]:
        histories = await read_histories(
            database_url, workflow_type=workflow_type, since=after, limit=limit
        )
        return report(histories_replayed(histories, registry))

    result = with_database(work)
    if json_output:
        terminal.print_json(result)
    else:
        _print(result)
    raise typer.Exit(1 if result["divergences"] else 0)


def histories_replayed(histories: list[list[HistoryRecord]], registry: Registry) -> list[Replayed]:
    return [replay(history, registry) for history in histories]


def report(replays: list[Replayed]) -> dict[str, Any]:
    """The replay's JSON: workflows and events re-decided, and every divergence."""
    complete = [r for r in replays if r.complete]
    return {
        "workflows": len(complete),
        "events": sum(r.events for r in complete),
        "divergences": [asdict(d) for r in complete for d in r.divergences],
        "incomplete": len(replays) - len(complete),
    }


def _print(result: dict[str, Any]) -> None:
    terminal.console.print(
        f"replayed {result['workflows']} workflows, {result['events']} events"
        + (
            f" ({result['incomplete']} histories incomplete, skipped)"
            if result["incomplete"]
            else ""
        )
    )
    if not result["divergences"]:
        terminal.console.print("[green]no divergences[/]")
        return
    for d in result["divergences"]:
        terminal.console.print(
            f"[red]diverged[/] {d['workflow_id']} at {d['event_id']}: {d['field']} "
            f"recorded {d['recorded']!r}, replayed {d['replayed']!r}",
            markup=True,
            highlight=False,
        )


def _time(text: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        usage_error(f"--since: {text!r} is not an ISO 8601 time")
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
