"""Bulk operator commands: `retry`, `cancel` and `migrate-workflow` given a selection
(`interlock.ops.selection`) instead of an id.

Nothing is sent before the preview (`interlock.ops.bulk`) has been made: `--dry-run` prints it and
stops; `--yes` (or, on a terminal, typing the number of workflows) applies it — paced, with
progress on stderr, each workflow's outcome in the operator's log with the operator and the
selection. Without either a selection is refused at once (exit 2, one line). Workflows the
preview shows refused are not sent (logged `skipped`). Exit 0 when every change sent was
accepted, 3 when the projector refused one, 1 when one got no decision.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import typer

from interlock.app import terminal
from interlock.ops import bulk
from interlock.ops.selection import Selection
from interlock.projector.engine import Workflow
from interlock.projector.store.operator_log import Entry, opened, record

Preview = dict[str, Any]
Applier = Callable[[Preview], Awaitable[dict[str, Any]]]
NO_CONFIRMATION = "a selection is applied only with --yes (or --dry-run to preview it first)"


class Prompt(Protocol):
    def isatty(self) -> bool: ...
    def readline(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Mode:
    dry_run: bool
    yes: bool
    json_output: bool
    pace: float
    """Most changes sent per second."""


def usage(message: str) -> typer.Exit:
    terminal.errors.print(message, markup=False, highlight=False, soft_wrap=True)
    return typer.Exit(2)


def check_mode(mode: Mode, stdin: Prompt = sys.stdin) -> None:
    """Refuse, before anything is read, a selection that could only apply silently."""
    if mode.dry_run and mode.yes:
        raise usage("--dry-run and --yes exclude each other")
    if not mode.dry_run and not mode.yes and not stdin.isatty():
        raise usage(NO_CONFIRMATION)
    if mode.pace <= 0:
        raise usage("--pace must be positive")


def confirmed(count: int, stdin: Prompt = sys.stdin) -> bool:
    """On a terminal: whether the operator typed the number of workflows to change."""
    terminal.errors.print(f"type {count} to apply to these {count} workflow(s): ", end="")
    return stdin.readline().strip() == str(count)


def show(chosen: Selection, previews: list[Preview], truncated: bool, json_output: bool) -> None:
    if json_output:
        return
    selection = " ".join(f"{k}={v}" for k, v in chosen.describe().items())
    counts = bulk.summary(previews)
    more = f" (first {chosen.limit}; more match)" if truncated else ""
    terminal.console.print(
        f"selected {len(previews)}{more} [{selection}]: {counts['accepted']} would change,"
        f" {counts['refused']} refused",
        markup=False,
        highlight=False,
    )
    for p in previews:
        terminal.console.print(_line(p), markup=False, highlight=False, soft_wrap=True)


def _line(p: Preview) -> str:
    head = f"{p['workflow_id']:<40} {p['state']:<22} "
    if p["outcome"] != "accepted":
        guards = ", ".join(p.get("failed_guards") or [])
        unknown = "".join(
            f"; {e['state']} outcome unknown under key {e['idempotency_key'] or '(none recorded)'}:"
            f" settle it with interlock effect {p['workflow_id']} confirm|rerun|compensate"
            for e in p.get("unknown_effects") or []
        )
        return (
            head
            + f"refused: {p['reason']} ({p['detail']}{'; ' + guards if guards else ''})"
            + unknown
        )
    effects = "; ".join(
        f"{e['attempt']} {e['state']} under key {e['idempotency_key'] or '(none recorded)'}"
        f" (status {e['status']}, looked up by key first)"
        for e in p["effects_to_reconcile"]
    )
    return head + f"-> {p['to_state']}" + (f"  [{effects}]" if effects else "")


def report(chosen: Selection, previews: list[Preview], truncated: bool, json_output: bool) -> None:
    """The final report: JSON on stdout (`{"selected", "workflows": [...]}`), and the exit."""
    applied = [p["applied"] for p in previews if "applied" in p]
    if json_output:
        terminal.print_json(
            {
                "selection": chosen.describe(),
                "selected": len(previews),
                "truncated": truncated,
                "workflows": previews,
                "applied": sum(bool(a.get("accepted")) for a in applied),
            }
        )
    if any(not a.get("accepted") and a.get("reason") in {"no_decision", "queued"} for a in applied):
        raise typer.Exit(1)
    if any(not a.get("accepted") for a in applied):
        raise typer.Exit(3)


async def apply(
    database_url: str,
    chosen: Selection,
    previews: list[Preview],
    *,
    action: str,
    operator: str,
    pace: float,
    send: Applier,
) -> None:
    """Send each change the preview allows, at most `pace` a second, logging each outcome
    (and each skipped workflow) with the operator and the selection; progress on stderr."""
    async with opened(database_url) as connection:
        total, began = len(previews), time.monotonic()
        for index, p in enumerate(previews, start=1):
            if p["outcome"] != "accepted":
                await _log(
                    connection,
                    chosen,
                    p,
                    action=action,
                    operator=operator,
                    outcome="skipped",
                    detail=p["reason"],
                )
                _progress(index, total, p["workflow_id"], f"skipped ({p['reason']})")
                continue
            # Pacing, not waiting for work: the n-th change goes no sooner than n / pace.
            await asyncio.sleep(max(0.0, began + (index - 1) / pace - time.monotonic()))
            outcome = await send(p)
            p["applied"] = outcome
            verdict = "accepted" if outcome.get("accepted") else "refused"
            why = outcome.get("to_state") if outcome.get("accepted") else outcome.get("reason")
            await _log(
                connection,
                chosen,
                p,
                action=action,
                operator=operator,
                outcome=verdict,
                detail=str(why),
                sent=outcome,
            )
            _progress(index, total, p["workflow_id"], f"{verdict} ({why})")


async def _log(
    connection: Any,
    chosen: Selection,
    p: Preview,
    *,
    action: str,
    operator: str,
    outcome: str,
    detail: str,
    sent: dict[str, Any] | None = None,
) -> None:
    await record(
        connection,
        Entry(
            operator=operator,
            action=action,
            outcome=outcome,
            selection=chosen.describe(),
            workflow_type=chosen.workflow_type,
            tenant_id=p["tenant_id"],
            workflow_id=p["workflow_id"],
            event_id=(sent or {}).get("event_id"),
            detail=detail,
        ),
    )


def _progress(index: int, total: int, workflow_id: str, what: str) -> None:
    terminal.errors.print(
        f"[{index}/{total}] {workflow_id}: {what}", markup=False, highlight=False, soft_wrap=True
    )


async def run(
    database_url: str,
    chosen: Selection,
    mode: Mode,
    *,
    preview: Callable[[Workflow], Preview],
    action: str,
    operator: str,
    send: Applier,
    stdin: Prompt = sys.stdin,
) -> tuple[list[Preview], bool]:
    """Select, preview, and (confirmed) apply; returns the previews (with what was applied)."""
    selected, truncated = await bulk.candidates(database_url, chosen)
    previews = [preview(wf) for wf in selected]
    await run_previewed(
        database_url,
        chosen,
        mode,
        (previews, truncated),
        action=action,
        operator=operator,
        send=send,
        stdin=stdin,
    )
    return previews, truncated


async def run_previewed(
    database_url: str,
    chosen: Selection,
    mode: Mode,
    selected: tuple[list[Preview], bool],
    *,
    action: str,
    operator: str,
    send: Applier,
    stdin: Prompt = sys.stdin,
) -> None:
    """Show the previews of the `selected` (and whether more matched) and, confirmed, apply."""
    previews, truncated = selected
    show(chosen, previews, truncated, mode.json_output)
    if mode.dry_run or not previews:
        return
    if not mode.yes and not confirmed(len(previews), stdin):
        raise usage("not confirmed: nothing was sent")
    await apply(
        database_url, chosen, previews, action=action, operator=operator, pace=mode.pace, send=send
    )
