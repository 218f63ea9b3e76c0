"""`interlock chaos`: Jepsen-style testing of a whole stack, for users to run on theirs.

It starts every installed component as supervised child processes, drives N workflows of
every installed type through a mix of scenarios (approvals, rejections, cancellations,
faults in the simulators), and meanwhile follows a seeded fault schedule (`schedule`):
components killed with SIGKILL or at their crash points, stages held down, deliveries
duplicated, the broker and the database stopped and started (those of the embedded stack,
which chaos starts for itself under `<home>/chaos/`; against a configured broker and
database those two are skipped). Then it waits for quiescence and checks the invariants
(`invariants`) from the database and the simulators' ledgers.

`--json` prints exactly `{"workflows", "seed", "faults": {"<component kind>": count,
"nats_restarts", "postgres_restarts"}, "lost", "duplicate_effects", "unauthorized_effects",
"audit_gaps", "stuck", "dlq_good", "recovery_p95_s", "ok"}`; any violation exits 1 and prints
the seed and the workflow ids that broke an invariant (on stderr). The same seed replays the
same schedule.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Annotated, Any

import typer

from interlock.app import terminal
from interlock.app.options import JsonOpt, load_settings
from interlock.tools.chaos.run import ChaosReport, run_chaos

log = logging.getLogger("interlock.chaos")


def chaos(
    workflows: Annotated[int, typer.Option(min=1, help="Workflows to drive.")] = 100,
    duration: Annotated[
        float, typer.Option(min=20, help="Seconds of faults (quiescence and checks follow).")
    ] = 120.0,
    seed: Annotated[int, typer.Option(help="Seed of the fault schedule and scenario mix.")] = 1,
    json_output: JsonOpt = False,
) -> None:
    """Drive workflows through SIGKILLs, broker and database restarts and duplicated
    deliveries, then check that nothing was lost, doubled, unauthorised or stuck."""
    settings = load_settings()
    began = time.monotonic()
    report = asyncio.run(run_chaos(settings, workflows, duration, seed))
    if json_output:
        terminal.print_json(report.as_json())
    else:
        _show(report, time.monotonic() - began)
    if not report.ok:
        terminal.errors.print(
            f"chaos found violations with seed {seed}; replay it with --seed {seed}"
        )
        terminal.errors.print("workflows: " + " ".join(report.broken or ["(none: see dlq_good)"]))
        raise typer.Exit(1)


def _show(report: ChaosReport, seconds: float) -> None:
    shown: dict[str, Any] = report.as_json()
    terminal.console.print(
        f"chaos: {report.workflows} workflows, seed {report.seed}, schedule "
        f"{report.schedule}, broker sync {report.broker_sync}, {seconds:.0f}s"
    )
    terminal.console.print(json.dumps(shown, indent=2), markup=False, highlight=False)
    terminal.console.print("OK: no invariant broken" if report.ok else "VIOLATIONS (see above)")
