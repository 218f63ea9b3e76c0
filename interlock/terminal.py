"""Human-readable rendering for the CLI (machines use `--json`)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.table import Table

# Not a terminal (CI logs, pipes): keep tables readable instead of squeezing them to 80.
console = Console(width=None if Console().is_terminal else 160)
errors = Console(stderr=True)


def print_json(value: Any) -> None:
    """Compact, stable JSON on stdout (no colour, no wrapping)."""
    print(json.dumps(value, indent=2, default=str, sort_keys=False))


def workflow(view: dict[str, Any]) -> None:
    console.print(
        f"[bold]{view['workflow_id']}[/]  {view['workflow_type']} v{view['definition_version']}"
        f"  state [bold cyan]{view['state']}[/]  version {view['version']}"
    )
    execution = view["execution"]
    if execution.get("review"):
        review = execution["review"]
        console.print(f"  manual review: {review['reason']} (from {review['from_state']})")
    if execution.get("open_jobs"):
        jobs = ", ".join(j["stage"] for j in execution["open_jobs"].values())
        console.print(f"  waiting for: {jobs}")
    for timer in (execution.get("timers") or {}).values():
        console.print(f"  timer {timer['kind']}: {timer['event']} at {timer['fire_at']}")
    console.print(f"  data: {', '.join(sorted(view['data'])) or '-'}")
    table = Table("#", "event", "from", "to", "outcome", "actor", "v", "at", box=None)
    for i, entry in enumerate(view["audit"], 1):
        outcome = "[green]accepted[/]" if entry["accepted"] else f"[red]{entry['reason']}[/]"
        table.add_row(
            str(i),
            entry["event_type"],
            entry["from_state"] or "",
            entry["to_state"] or "",
            outcome,
            f"{entry['actor']['id']} ({entry['actor']['role']})",
            str(entry["state_version"]),
            entry["occurred_at"][11:23],
        )
    console.print(table)


def workflows(rows: list[dict[str, Any]]) -> None:
    table = Table("workflow", "type", "state", "version", "updated", box=None)
    for r in rows:
        table.add_row(
            r["workflow_id"],
            r["workflow_type"],
            r["state"],
            str(r["version"]),
            r["updated_at"][:19],
        )
    console.print(table)
