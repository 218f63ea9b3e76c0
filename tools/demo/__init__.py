"""`interlock demo`: the named support scenarios, then the shipped request cases (or, with
`--fixture`, only the cases of that file), end to end, on the real stack."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from interlock import queries, telemetry, terminal
from interlock.access import component_roles
from interlock.composition import default_stack
from interlock.health import attached
from interlock.options import JsonOpt, load_settings, with_stack
from interlock.runtime import prepare, supervised
from interlock.settings import Settings
from interlock.signals import Clients
from interlock.simulators import (
    action_count,
    notification_count,
    reversal_count,
    seed_customer,
)
from interlock.simulators.db import connection
from interlock.supervisor import Supervisor
from interlock.tools.demo import casefile, fixture
from interlock.tools.demo.display import Progress
from interlock.tools.demo.runner import ApprovalDesk, Run, start_request
from interlock.tools.demo.scenarios import SCENARIOS, Scenario

DEMO_ENV = {
    "INTERLOCK_PARAMETERS": '{"support": {"approval_sla_seconds": 6, "retry_delay_scale": 0.02}}',
    "INTERLOCK_EXTERNAL_TIMEOUT": "0.5",
}
SCENARIO_TIMEOUT = 120.0


@dataclass
class ScenarioResult:
    name: str
    expected: str
    actual: str
    ok: bool
    workflow_id: str
    seconds: float
    failed_checks: list[str]

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "expected": self.expected,
            "actual": self.actual,
            "ok": self.ok,
            "workflow_id": self.workflow_id,
            "seconds": round(self.seconds, 3),
            "failed_checks": self.failed_checks,
        }


def demo(
    json_output: JsonOpt = False,
    only: Annotated[list[str] | None, typer.Option(help="Run only these scenarios.")] = None,
    fixture_file: Annotated[
        Path | None,
        typer.Option(
            "--fixture", help="Run only the request cases of this file (seed 001's format)."
        ),
    ] = None,
) -> None:
    """Run the built-in scenarios and request cases end to end and report each outcome
    (exit 1 on a mismatch)."""
    for key, value in DEMO_ENV.items():
        os.environ.setdefault(key, value)
    cases = _cases(fixture_file or casefile.SHIPPED)
    s = load_settings()
    telemetry.start(s, "demo")
    chosen = [] if fixture_file else [sc for sc in SCENARIOS if not only or sc.name in only]
    outcomes, report = with_stack(
        lambda s, nats_url, database_url: _run_all(
            s, nats_url, database_url, chosen, cases, quiet=json_output
        ),
        s,
    )
    scenarios = {} if fixture_file else {"scenarios": [o.as_json() for o in outcomes]}
    if json_output:
        terminal.print_json({**scenarios, **report.as_json()})
    else:
        fixture.show(report)
    telemetry.stop()
    cases_ok = report.ok or (report.skipped is not None and fixture_file is None)
    if not all(o.ok for o in outcomes) or not cases_ok:
        raise typer.Exit(1)


def _cases(path: Path) -> casefile.Fixture:
    """The case file, validated, with the settings its cases need put in the environment."""
    try:
        cases = casefile.load(path)
    except casefile.FixtureError as exc:
        terminal.errors.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    os.environ.update(casefile.environment(path, cases, os.environ))
    return cases


async def _run_all(
    s: Settings,
    nats_url: str,
    database_url: str,
    chosen: list[Scenario],
    cases: casefile.Fixture,
    *,
    quiet: bool,
) -> tuple[list[ScenarioResult], fixture.FixtureReport]:
    """The scenarios, then the request cases, on one set of components."""
    await prepare(nats_url, database_url, component_roles(s))
    names = None if chosen else fixture.COMPONENTS
    async with _components(s, nats_url, database_url, names) as supervisor:
        outcomes = await _scenarios(s, nats_url, database_url, chosen, quiet) if chosen else []
        return outcomes, await fixture.play(s, cases, supervisor, nats_url, database_url)


async def run_demo(
    s: Settings, nats_url: str, database_url: str, chosen: list[Scenario], *, quiet: bool = False
) -> list[ScenarioResult]:
    await prepare(nats_url, database_url, component_roles(s))
    async with _components(s, nats_url, database_url):
        return await _scenarios(s, nats_url, database_url, chosen, quiet)


async def _scenarios(
    s: Settings, nats_url: str, database_url: str, chosen: list[Scenario], quiet: bool
) -> list[ScenarioResult]:
    bus = await Clients.connect(s, nats_url, "interlock-demo")
    engine = queries.open_reader(database_url, pool_size=4)
    desk = ApprovalDesk(bus.approvals)
    await desk.start()
    try:
        progress = Progress(chosen, enabled=not quiet)
        async with progress.live():
            return list(
                await asyncio.gather(
                    *(
                        _play(
                            sc,
                            bus=bus,
                            engine=engine,
                            desk=desk,
                            dsn=database_url,
                            progress=progress,
                        )
                        for sc in chosen
                    )
                )
            )
    finally:
        await desk.stop()
        await engine.dispose()
        await bus.close()


@asynccontextmanager
async def _components(
    s: Settings, nats_url: str, database_url: str, names: list[str] | None = None
) -> AsyncIterator[Supervisor | None]:
    """Start the components unless another process (e.g. `interlock up`) already runs them."""
    if (await attached("projector", nats_url))[0]:
        yield None
        return
    async with supervised(s, nats_url, database_url, names or default_stack()) as supervisor:
        yield supervisor


async def _play(
    sc: Scenario, *, bus: Clients, engine: Any, desk: ApprovalDesk, dsn: str, progress: Progress
) -> ScenarioResult:
    customer = f"demo-{uuid.uuid4().hex[:10]}"
    await seed_customer(dsn, customer, faults=sc.faults or None)
    run = Run(sc.name, "", "demo", customer, bus, engine, dsn)
    progress.track(run)
    started = time.monotonic()
    await start_request(run, sc.request, before_publish=desk.watch)
    try:
        await asyncio.wait_for(sc.script(run), SCENARIO_TIMEOUT)
    except TimeoutError:
        run.state = f"{run.state} (timed out)"
    view = await run.view()
    ledger = await _ledger(dsn, customer)
    failed = [name for name, check in sc.checks if view is None or not _holds(check, view, ledger)]
    actual = view["state"] if view else "NOT_CREATED"
    outcome = ScenarioResult(
        sc.name,
        sc.expected,
        actual,
        actual == sc.expected and not failed,
        run.workflow_id,
        time.monotonic() - started,
        failed,
    )
    progress.finish(run, outcome.ok)
    return outcome


def _holds(check: Any, view: dict[str, Any], ledger: dict[str, int]) -> bool:
    try:
        return bool(check(view, ledger))
    except (KeyError, TypeError, AttributeError):
        return False


async def _ledger(dsn: str, customer: str) -> dict[str, int]:
    async with connection(dsn) as conn:
        return {
            "actions": await action_count(conn, customer_id=customer),
            "reversals": await reversal_count(conn, customer_id=customer),
            "notifications": await notification_count(conn, customer_id=customer),
        }
