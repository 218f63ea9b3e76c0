"""Running the stack: every component (`up`), one component (`service`), the schema and
streams (`migrate`), and a component's health (`health`)."""

from __future__ import annotations

import asyncio
import signal
from typing import Annotated

import typer

from interlock import console, telemetry, terminal
from interlock.access import component_roles
from interlock.composition import CONSOLE, GATEWAY, default_stack, resolve_name
from interlock.endpoints import ENDPOINTS, write_endpoints
from interlock.health import attached
from interlock.options import with_component, with_stack
from interlock.runtime import Runtime, prepare, supervised
from interlock.settings import Settings


def up(
    only: Annotated[list[str] | None, typer.Option(help="Run only these components.")] = None,
) -> None:
    """Run projector, relay, timers, simulator, approval gateway, operator console and every
    stage service until Ctrl-C."""

    async def run(s: Settings, nats_url: str, database_url: str) -> None:
        stop = stop_on_signals()
        names = only or [*default_stack(), GATEWAY, CONSOLE]
        async with supervised(s, nats_url, database_url, names) as supervisor:
            shown = write_endpoints(s, nats_url, database_url, names)
            terminal.console.print(
                f"NATS {shown['nats_url']} (clients: `interlock client-url NAME`)\n"
                f"PostgreSQL {shown['database_url']}\nendpoints in {s.home / ENDPOINTS}"
            )
            for child in supervisor.status():
                terminal.console.print(f"  {child['name']:<32} pid {child['pid']}")
            if CONSOLE in names:
                await console.wait_until_serving(s)
                banner = console.banner(s, embedded=s.database_url is None)
                terminal.console.print(banner, markup=False, highlight=False, soft_wrap=True)
            terminal.console.print(f"logs in {s.home / 'logs'}; Ctrl-C stops everything")
            await stop.wait()

    with_stack(run)


def service(
    name: Annotated[
        str, typer.Argument(help="projector, relay, timer, sim, or a stage such as classify")
    ],
) -> None:
    """Run one component in the foreground (what `up` runs in each child process)."""
    component_name = _known(name)
    # What runs the components brings in every library they use (FastStream, aiohttp, the
    # stages and their clients): ~0.3 s that every other command would pay at start-up.
    from interlock.components import components  # noqa: PLC0415

    component = components()[component_name]

    async def run(s: Settings, nats_url: str, database_url: str | None) -> None:
        telemetry.start(s, component_name)
        try:
            await component(Runtime(s, nats_url, database_url), stop_on_signals())
        finally:
            telemetry.stop()

    with_component(component_name, run)


def migrate() -> None:
    """Apply database migrations, create the components' database roles and provision
    streams (`up` and `demo` do this themselves)."""
    with_stack(lambda s, n, d: prepare(n, d, component_roles(s)))
    terminal.console.print("database schema, roles and JetStream streams are up to date")


def health(name: Annotated[str, typer.Argument(help="A component, as for `service`.")]) -> None:
    """Exit 0 if the component is attached to the broker (for container health checks).
    Asks as the component itself: a container holds its own credentials only."""
    component = _known(name)
    ok, detail = with_component(component, lambda s, n, d: attached(component, n))
    (terminal.console if ok else terminal.errors).print(detail)
    if not ok:
        raise typer.Exit(1)


def _known(name: str) -> str:
    """The component's full name; exit 2 naming the known ones otherwise."""
    try:
        return resolve_name(name)
    except ValueError as exc:
        terminal.errors.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None


def stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop
