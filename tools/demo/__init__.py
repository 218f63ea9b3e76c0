"""`interlock demo`: the named support scenarios, then the shipped request cases (or, with
`--fixture`, only the cases of that file), end to end, on the real stack."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from interlock.app import terminal
from interlock.app.bootstrap import prepare, supervised
from interlock.app.composition import default_stack
from interlock.app.health import attached
from interlock.app.options import JsonOpt, each_of, load_settings, with_stack
from interlock.app.supervisor import Supervisor
from interlock.config import telemetry
from interlock.config.access import component_roles
from interlock.config.settings import Settings
from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.simulators import (
    action_count,
    notification_count,
    reversal_count,
    seed_customer,
)
from interlock.simulators.db import connection
from interlock.tools.demo import casefile, fixture
from interlock.tools.demo.display import Progress
from interlock.tools.demo.plugins import (
    Announcements,
    PluginRun,
    PluginScenario,
    play,
    plugin_scenarios,
)
from interlock.tools.demo.results import ScenarioResult
from interlock.tools.demo.runner import ApprovalDesk, Run, start_request
from interlock.tools.demo.scenarios import SCENARIOS, Scenario
from interlock.tools.demo.timings import (
    DEMO_ENV,
    demo_environment,
    running_timings,
    scenarios_for,
)
from interlock.tools.errors import FixtureError

__all__ = [
    "DEMO_ENV",
    "ScenarioResult",
    "demo",
    "demo_environment",
    "run_demo",
    "scenarios_for",
]
SCENARIO_TIMEOUT = 120.0


def demo(
    json_output: JsonOpt = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            help="Run only these scenarios.",
            callback=each_of(_scenario_names, "scenario"),
        ),
    ] = None,
    fixture_file: Annotated[
        Path | None,
        typer.Option(
            "--fixture", help="Run only the request cases of this file (seed 001's format)."
        ),
    ] = None,
) -> None:
    """Run the built-in scenarios and request cases end to end and report each outcome
    (exit 1 on a mismatch)."""
    for key, value in demo_environment().items():
        os.environ.setdefault(key, value)
    cases = _cases(fixture_file or casefile.SHIPPED)
    s = load_settings()
    telemetry.start(s, "demo")
    chosen = [] if fixture_file else [sc for sc in SCENARIOS if not only or sc.name in only]
    theirs = [] if fixture_file else plugin_scenarios(only)
    outcomes, report = with_stack(
        lambda s, nats_url, database_url: _run_all(
            s, nats_url, database_url, (chosen, theirs), cases, quiet=json_output
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
    except FixtureError as exc:
        terminal.errors.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    os.environ.update(casefile.environment(path, cases, os.environ))
    return cases


async def _run_all(
    s: Settings,
    nats_url: str,
    database_url: str,
    chosen: tuple[list[Scenario], list[PluginScenario]],
    cases: casefile.Fixture,
    *,
    quiet: bool,
) -> tuple[list[ScenarioResult], fixture.FixtureReport]:
    """The scenarios, then the request cases, on one set of components."""
    await prepare(nats_url, database_url, component_roles(s), partitions=s.projector_partitions)
    any_chosen = bool(chosen[0] or chosen[1])
    names = None if any_chosen else fixture.components()
    async with _components(s, nats_url, database_url, names) as supervisor:
        if supervisor is None and any_chosen:
            chosen = _attached(s, *chosen)
        outcomes = (
            await _scenarios(s, nats_url, database_url, *chosen, quiet=quiet) if any_chosen else []
        )
        return outcomes, await fixture.play(s, cases, supervisor, nats_url, database_url)


async def run_demo(
    s: Settings,
    nats_url: str,
    database_url: str,
    chosen: list[Scenario],
    *,
    quiet: bool = False,
    plugins: list[PluginScenario] | None = None,
) -> list[ScenarioResult]:
    """The chosen built-in scenarios and `plugins`' scenarios on their own components."""
    await prepare(nats_url, database_url, component_roles(s), partitions=s.projector_partitions)
    async with _components(s, nats_url, database_url):
        return await _scenarios(s, nats_url, database_url, chosen, plugins or [], quiet=quiet)


async def _scenarios(
    s: Settings,
    nats_url: str,
    database_url: str,
    chosen: list[Scenario],
    theirs: list[PluginScenario],
    *,
    quiet: bool,
) -> list[ScenarioResult]:
    bus = await Clients.connect(s, nats_url, "interlock-demo")
    engine = queries.open_reader(database_url, pool_size=4)
    desk = ApprovalDesk(bus.approvals)
    routes = Announcements(bus, {p.workflow_type for p in theirs})
    await desk.start()
    await routes.start()
    try:
        progress = Progress([*chosen, *theirs], enabled=not quiet)
        ours = (
            _play(sc, bus=bus, engine=engine, desk=desk, dsn=database_url, progress=progress)
            for sc in chosen
        )
        plugin_runs = (
            _play_plugin(p, s, bus=bus, engine=engine, routes=routes, progress=progress)
            for p in theirs
        )
        async with progress.live():
            return list(await asyncio.gather(*ours, *plugin_runs))
    finally:
        await routes.stop()
        await desk.stop()
        await engine.dispose()
        await bus.close()


async def _play_plugin(
    entry: PluginScenario,
    s: Settings,
    *,
    bus: Clients,
    engine: Any,
    routes: Announcements,
    progress: Progress,
) -> ScenarioResult:
    run = PluginRun(
        entry.name,
        entry.workflow_type,
        "demo",
        s.home.resolve(),
        bus,
        engine,
        on_start=routes.watch,
    )
    outcome = await play(entry, run, progress.track)
    progress.finish(run, outcome.ok)
    return outcome


def _attached(
    s: Settings, ours: list[Scenario], theirs: list[PluginScenario]
) -> tuple[list[Scenario], list[PluginScenario]]:
    """What may run on the `interlock up` the demo attached to; says what it skipped and why."""
    running = running_timings(s)
    ours, skipped, why = scenarios_for(ours, s.timings(), running)
    theirs, skipped_theirs, why_theirs = scenarios_for(theirs, s.timings(), running)
    if skipped or skipped_theirs:
        names = ", ".join([*(sc.name for sc in skipped), *(p.name for p in skipped_theirs)])
        terminal.errors.print(f"skipped {names}: {why or why_theirs}", soft_wrap=True, markup=False)
    return ours, theirs


def _scenario_names() -> list[str]:
    """What `--only` accepts: built-in scenario names, plugin scenarios (`<type>.<name>`) and
    plugin types (all of that type's scenarios)."""
    theirs = plugin_scenarios()
    return [
        *(sc.name for sc in SCENARIOS),
        *(p.name for p in theirs),
        *sorted({p.workflow_type for p in theirs}),
    ]


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
    outcome = ScenarioResult.judged(
        sc.name,
        sc.expected,
        view,
        workflow_id=run.workflow_id,
        seconds=time.monotonic() - started,
        failed_checks=failed,
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
