"""`interlock dlq list|show|redrive`: inspect dead letters and send them back.

A dead letter's id is its sequence number in the `WF_DLQ` stream (`list` shows them).
Redriving keeps the event id, so a redriven duplicate is still deduplicated downstream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import nats
import typer
from nats.js import JetStreamContext

from interlock.app import terminal
from interlock.app.options import JsonOpt, with_stack
from interlock.cli import selecting
from interlock.cli.bulk import Mode, usage
from interlock.cli.redriving import bulk_redrive
from interlock.contracts.urls import nats_servers
from interlock.messaging import letters as dlq

T = TypeVar("T")
app = typer.Typer(help="Dead letters: list, show and redrive them.", no_args_is_help=True)
SourceOpt = Annotated[
    str | None, typer.Option(help="Only letters from this source (projector, relay, a stage).")
]
ReasonOpt = Annotated[str | None, typer.Option(help="Only letters with this reason.")]


def _on_broker(work: Callable[[JetStreamContext], Awaitable[T]]) -> T:
    async def run(_s: Any, nats_url: str, _d: str) -> T:
        nc = await nats.connect(nats_servers(nats_url), name="interlock-dlq")
        try:
            return await work(nc.jetstream())
        finally:
            await nc.drain()

    return with_stack(run, database=False)


@app.command(name="list")
def list_letters(
    source: SourceOpt = None, reason: ReasonOpt = None, json_output: JsonOpt = False
) -> None:
    """Dead letters, oldest first, with their source and reason (no payload values)."""

    async def collect(js: JetStreamContext) -> list[dict[str, Any]]:
        return [d.summary() async for d in dlq.letters(js, source=source, reason=reason)]

    found = _on_broker(collect)
    if json_output:
        terminal.print_json({"letters": found})
        return
    if not found:
        terminal.console.print("no dead letters")
    for d in found:
        terminal.console.print(
            f"{d['id']:>6}  {d['source']:<28} {d['reason']:<24} {d['type'] or '-':<24} "
            f"{d['workflow_id'] or '-'}",
            markup=False,
            highlight=False,
        )


@app.command()
def show(
    letter_id: Annotated[int, typer.Argument(help="The id `list` shows.")],
    json_output: JsonOpt = False,
) -> None:
    """One dead letter in full: reason, detail, original subject, headers and body."""
    found = _on_broker(lambda js: dlq.letter(js, letter_id))
    if found is None:
        _no_such(letter_id)
    assert found is not None
    view = found.full()
    if json_output:
        terminal.print_json(view)
        return
    for key, value in view.items():
        terminal.console.print(f"{key}: {value}", markup=False, highlight=False)


@app.command()
def redrive(
    letter_ids: Annotated[
        list[int] | None, typer.Argument(help="Ids to redrive (or use --all with filters).")
    ] = None,
    *,
    every: Annotated[bool, typer.Option("--all", help="Every letter the filters select.")] = False,
    source: SourceOpt = None,
    reason: ReasonOpt = None,
    workflow_type: selecting.TypeSel = None,
    states: selecting.StateSel = None,
    tenant: Annotated[
        str | None, typer.Option("--tenant", help="With --type: this tenant.")
    ] = None,
    since: selecting.SinceSel = None,
    limit: selecting.LimitSel = None,
    dry_run: selecting.DryRunOpt = False,
    yes: selecting.YesOpt = False,
    pace: selecting.PaceOpt = 5.0,
    actor: Annotated[
        str, typer.Option("--as", help="Operator id, for the audit.")
    ] = "cli-operator",
    json_output: JsonOpt = False,
) -> None:
    """Publish dead letters back to their original subjects (same event ids) and remove them.
    Webhooks the gateway refused are never redriven (exit 1 when named by id). With --type, a
    selection previewed first (--dry-run, --yes)."""
    if workflow_type is not None:
        if letter_ids or every or source:
            raise usage("give letter ids or --all, or a selection with --type, not both")
        chosen = selecting.chosen(
            workflow_type, states=states, tenant=tenant, since=since, reason=reason, limit=limit
        )
        bulk_redrive(chosen, Mode(dry_run, yes, json_output, pace), operator=actor)
        return
    if bool(letter_ids) == every:
        terminal.errors.print("give letter ids, or --all (optionally with --source/--reason)")
        raise typer.Exit(2)

    async def send(js: JetStreamContext) -> tuple[list[int], list[int], list[str]]:
        chosen: list[dlq.Letter] = []
        missing: list[int] = []
        if every:
            chosen = [d async for d in dlq.letters(js, source=source, reason=reason)]
        for letter_id in letter_ids or []:
            found = await dlq.letter(js, letter_id)
            if found is None:
                missing.append(letter_id)
            else:
                chosen.append(found)
        refused = [why for d in chosen if (why := d.not_redrivable()) is not None]
        sendable = [d for d in chosen if d.not_redrivable() is None]
        for dead in sendable:
            await dlq.redrive(js, dead)
        return [d.id for d in sendable], missing, refused

    sent, missing, refused = _on_broker(send)
    terminal.console.print(f"redrove {len(sent)} dead letter(s)")
    if missing:
        _no_such(*missing)
    if refused and every:
        # Chosen by filters, not by id: say what was left, it is not a failure.
        terminal.console.print(f"left {len(refused)} not redrivable (see `interlock dlq show`)")
    elif refused:
        for why in refused:
            terminal.errors.print(why, markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def _no_such(*letter_ids: int) -> None:
    ids = ", ".join(str(i) for i in letter_ids)
    terminal.errors.print(f"no dead letter {ids} (see `interlock dlq list`)")
    raise typer.Exit(1)
