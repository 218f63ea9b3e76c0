"""`interlock repartition N`: drain the slots a change to N projector partitions moves, on the
running stack, so the count can change without stopping the publishers or losing any
workflow's order (`messaging.slot_drain`).

Prints what is left every few seconds (or, with `--json`, one object at the end); exits 0 once
drained, 1 if the time ran out (the slots are opened again, nothing changed, as when it is
interrupted), 2 for a change it cannot drain (one partition on a work-queue inbound stream,
the same count, an unknown count).
"""

from __future__ import annotations

import time
from typing import Annotated

import nats
import typer

from interlock.app import terminal
from interlock.app.options import JsonOpt, with_stack
from interlock.config.settings import Settings
from interlock.contracts.urls import nats_servers
from interlock.messaging.errors import DrainTimedOut
from interlock.messaging.slot_drain import Drain, drain

PROGRESS_EVERY_S = 5.0


def repartition(
    count: Annotated[int, typer.Argument(help="The partition count to change to (1..64).")],
    within: Annotated[
        float,
        typer.Option("--timeout", min=1.0, help="Seconds to wait for the running projectors."),
    ] = 300.0,
    json_output: JsonOpt = False,
) -> None:
    """Close the inbound slots that move to another partition when the count becomes COUNT and
    wait until the running projectors have decided every message they hold (their publishers
    are refused and retry meanwhile; the other slots keep flowing). Then stop the stack, set
    INTERLOCK_PROJECTOR_PARTITIONS=COUNT and start it (or run `interlock migrate`)."""
    shown = [0.0]

    def report(plan: Drain) -> None:
        if json_output or plan.drained or time.monotonic() - shown[0] < PROGRESS_EVERY_S:
            return
        shown[0] = time.monotonic()
        left = "; ".join(f"{k}: {v}" for k, v in plan.holding.items() if v)
        terminal.errors.print(f"{plan.seconds:.0f}s: waiting for the projectors ({left})")

    async def work(_s: Settings, nats_url: str, _database_url: str) -> Drain:
        nc = await nats.connect(nats_servers(nats_url), name="interlock-repartition")
        try:
            return await drain(nc.jetstream(), count, within=within, progress=report)
        finally:
            await nc.drain()

    try:
        plan = with_stack(work, database=False)
    except DrainTimedOut as exc:
        terminal.errors.print(f"[red]{exc}[/]", soft_wrap=True, highlight=False)
        raise typer.Exit(1) from None
    if json_output:
        terminal.print_json(plan.as_json())
        return
    moving = sum(len(slots) for slots in plan.moving.values())
    terminal.console.print(
        f"{moving} slot(s) moving from {plan.before} to {plan.after} partitions are drained "
        f"({plan.seconds:.1f}s); their publishes are refused until the stack runs "
        f"{plan.after}: stop it, set INTERLOCK_PROJECTOR_PARTITIONS={plan.after} and start "
        "it (or run `interlock migrate`)"
    )
