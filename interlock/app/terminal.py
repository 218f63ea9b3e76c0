"""Human-readable rendering for the CLI (machines use `--json`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Column, Table

from interlock.ops.failures import last_failure

# Not a terminal (CI logs, pipes): keep tables readable instead of squeezing them to 80.
console = Console(width=None if Console().is_terminal else 160)
errors = Console(stderr=True)


def print_json(value: Any) -> None:
    """Compact, stable JSON on stdout (no colour, no wrapping)."""
    print(json.dumps(value, indent=2, default=str, sort_keys=False))


def workflow(view: dict[str, Any]) -> None:
    console.print(
        f"[bold]{view['workflow_id']}[/]  {view['workflow_type']} v{view['definition_version']}"
        f"  state [bold cyan]{view['state']}[/]  version {view['version']}",
        soft_wrap=True,  # the id stays whole, to be copied
    )
    execution = view["execution"]
    if execution.get("review"):
        review = execution["review"]
        console.print(f"  manual review: {review['reason']} (from {review['from_state']})")
    failure = last_failure(view)
    if failure:
        console.print(f"  last error: {failure}", markup=False, highlight=False)
    if execution.get("open_jobs"):
        jobs = ", ".join(j["stage"] for j in execution["open_jobs"].values())
        console.print(f"  waiting for: {jobs}")
    for timer in (execution.get("timers") or {}).values():
        console.print(f"  timer {timer['kind']}: {timer['event']} at {timer['fire_at']}")
    for effect in view.get("effects") or ():
        key = f" (idempotency key {effect['idempotency_key']})" if effect["idempotency_key"] else ""
        console.print(f"  effect {effect['state']}: {effect['status']}{key}", soft_wrap=True)
    for line in model_call_lines(view.get("model_calls") or ()):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    spend = view.get("model_spend") or {}
    if spend.get("calls"):
        dropped = f" ({spend['dropped']} beyond the kept records)" if spend.get("dropped") else ""
        console.print(
            f"  model spend: {spend['calls']} calls, {spend['tokens_in']} tokens in, "
            f"{spend['tokens_out']} out, cost {spend['cost']:g}{dropped}",
            markup=False,
            highlight=False,
        )
    console.print(f"  data: {', '.join(sorted(view['data'])) or '-'}")
    # Cells wrap (fold) rather than end in an ellipsis: nothing shown is cut.
    table = Table(
        *(Column(h, overflow="fold") for h in ("#", "event", "from", "to", "outcome", "actor")),
        Column("v", overflow="fold"),
        Column("at", no_wrap=True, min_width=29),
        box=None,
    )
    for i, entry in enumerate(view["audit"], 1):
        outcome = "[green]accepted[/]" if entry["accepted"] else f"[red]{entry['reason']}[/]"
        failed = entry.get("error_class")
        table.add_row(
            str(i),
            escape(f"{entry['event_type']} ({failed})" if failed else entry["event_type"]),
            entry["from_state"] or "",
            entry["to_state"] or "",
            outcome,
            f"{entry['actor']['id']} ({entry['actor']['role']})",
            str(entry["state_version"]),
            iso(entry["occurred_at"]),
        )
    console.print(table)


def workflows(rows: list[dict[str, Any]]) -> None:
    """Aligned lines rather than a table: a line too long for the terminal wraps, but an id
    (pasted into `show`) is never cut or squeezed."""
    lines = [("workflow", "type", "state", "version", "updated")] + [
        (
            r["workflow_id"],
            r["workflow_type"],
            r["state"],
            str(r["version"]),
            iso(r["updated_at"], "seconds"),
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        text = "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        console.print(text.rstrip(), soft_wrap=True, markup=False, highlight=False)


def iso(timestamp: str, timespec: str = "milliseconds") -> str:
    """An ISO-8601 timestamp with its offset, to `timespec` precision."""
    try:
        return datetime.fromisoformat(timestamp).isoformat(timespec=timespec)
    except ValueError:
        return timestamp


def model_call_lines(calls: Iterable[dict[str, Any]]) -> list[str]:
    """One line per model call: which attempt, its verdict, model, tokens and cost."""
    lines = []
    for c in calls:
        tokens = c["tokens"]["input"] + c["tokens"]["output"]
        mark = " (accepted)" if c.get("accepted") else ""
        errors = f" - {'; '.join(c['errors'])}" if c.get("errors") else ""
        lines.append(
            f"  model call {c['seq']}: {c['task']} attempt {c['attempt']} {c['verdict']}{mark}"
            f" [{c['model']}, {c['prompt_version']}, {tokens} tokens, cost {c['cost']:g},"
            f" {c['latency_ms']:.0f} ms]{errors}"
        )
    return lines
