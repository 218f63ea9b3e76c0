"""Running the stack: every component (`up`), one component (`service`), the schema and
streams (`migrate`), and a component's health (`health`)."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable
from pathlib import Path
from typing import Annotated

import typer

import interlock
from interlock import console
from interlock.app import terminal
from interlock.app.bootstrap import Runtime, prepare, supervised
from interlock.app.composition import default_stack, resolve_name
from interlock.app.devsender import with_dev_sender
from interlock.app.endpoints import ENDPOINTS, write_endpoints
from interlock.app.health import healthy
from interlock.app.options import load_settings, with_component, with_stack
from interlock.app.startup import (
    require_free_ports,
    shadowing_directory,
    without_taken_metrics_port,
)
from interlock.app.uplock import only_up
from interlock.config import telemetry
from interlock.config.access import component_roles
from interlock.config.components import CONSOLE, GATEWAY, STAGE_HOST, placed
from interlock.config.settings import Settings
from interlock.config.telemetry import SCRAPED
from interlock.contracts.errors import ConfigurationError
from interlock.contracts.partitions import is_projector, partition_of_component


def up(
    only: Annotated[list[str] | None, typer.Option(help="Run only these components.")] = None,
) -> None:
    """Run projector, relay, timers, simulator, approval gateway, operator console and every
    stage service until Ctrl-C (the stage services in one process on a small machine:
    INTERLOCK_STAGE_HOST). `--only` takes the names `service` takes, checked before anything
    starts."""
    only = [_known(name) for name in only] if only else None

    async def run(s: Settings, nats_url: str, database_url: str) -> None:
        stop = stop_on_signals()
        stack = default_stack(partitions=s.projector_partitions, stage_host=s.hosts_stages())
        names = only or [*stack, *(name for name in placed("extra") if name not in stack)]
        s = without_taken_metrics_port(s) if SCRAPED in names else s
        async with supervised(s, nats_url, database_url, names, stop) as supervisor:
            if stop.is_set():  # Ctrl-C while the components were starting
                return
            shown = write_endpoints(s, nats_url, database_url, names)
            terminal.console.print(
                f"NATS {shown['nats_url']} (clients: `interlock client-url NAME`)\n"
                f"PostgreSQL {shown['database_url']}\nendpoints in {s.home / ENDPOINTS}"
            )
            if shown["metrics_url"]:
                terminal.console.print(f"Prometheus metrics {shown['metrics_url']}")
            for child in supervisor.status():
                terminal.console.print(f"  {child['name']:<32} pid {child['pid']}")
            if sender_line and GATEWAY in names:
                terminal.console.print(sender_line)
            if CONSOLE in names:
                await console.wait_until_serving(s)
                banner = console.banner(s, embedded=s.database_url is None)
                terminal.console.print(banner, markup=False, highlight=False, soft_wrap=True)
            terminal.console.print(f"logs in {s.home / 'logs'}; Ctrl-C stops everything")
            await stop.wait()

    settings, sender_line = with_dev_sender(load_settings())
    _check_adapters(settings)
    _check_layout(only or [], settings.projector_partitions)
    require_free_ports(settings, only or placed("extra"))  # before any server is started
    shadow = shadowing_directory(Path(interlock.__file__).parent, Path.cwd())
    if shadow is not None:
        terminal.errors.print(
            f"warning: {shadow} shadows the installed interlock package for `python -m "
            "interlock` run here (the components are started so that it does not)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    with only_up(settings.home):
        with_stack(run, settings)


def service(
    name: Annotated[
        str,
        typer.Argument(
            help=f"{', '.join([*placed('core'), *placed('extra')])}, {STAGE_HOST} (every stage "
            "service in one process), or a stage such as classify"
        ),
    ],
) -> None:
    """Run one component in the foreground (what `up` runs in each child process)."""
    component_name = _known(name)
    # What runs the components brings in every library they use (FastStream, aiohttp, the
    # stages and their clients): ~0.3 s that every other command would pay at start-up.
    from interlock.app.runners import component as runnable  # noqa: PLC0415

    component = runnable(component_name)

    async def run(s: Settings, nats_url: str, database_url: str | None) -> None:
        _check_adapters(s)
        telemetry.start(s, component_name)
        stop = stop_on_signals()
        try:
            await within_grace(component(Runtime(s, nats_url, database_url), stop), stop, s)
        finally:
            telemetry.stop()

    with_component(component_name, run)


def _check_layout(names: list[str], partitions: int) -> None:
    """Refuse (one line, exit 2) a projector partition that is not one of the configured
    layout's."""
    for name in names:
        if is_projector(name) and name != "projector":  # `projector`: every partition
            try:
                partition_of_component(name, partitions)
            except ValueError as exc:
                raise ConfigurationError(str(exc), hint="choose that layout's names") from None


def _check_adapters(s: Settings) -> None:
    """Refuse (`ConfigurationError`: one line, exit 2 through the CLI's error path) an
    `INTERLOCK_ADAPTERS` that names an unknown type, port or adapter, or configures one
    wrongly."""
    # The plugins are loaded only by the commands that run the stack.
    from interlock.app.bindings import check_adapters  # noqa: PLC0415
    from interlock.config.plugins import installed  # noqa: PLC0415

    check_adapters(s.adapters, installed())


def migrate(
    repartition: Annotated[
        bool,
        typer.Option(
            help="Rebuild the inbound stream for INTERLOCK_PROJECTOR_PARTITIONS > 1 if it was "
            "made for one partition (refused unless it is empty; stop the stack first)."
        ),
    ] = False,
) -> None:
    """Apply database migrations, create the components' database roles and provision
    streams for INTERLOCK_PROJECTOR_PARTITIONS at INTERLOCK_STREAM_REPLICAS copies (`up` and
    `demo` do this themselves)."""
    with_stack(
        lambda s, n, d: prepare(
            n,
            d,
            component_roles(s),
            partitions=s.projector_partitions,
            repartition=repartition,
            replicas=s.stream_replicas,
        )
    )
    terminal.console.print("database schema, roles and JetStream streams are up to date")


def health(name: Annotated[str, typer.Argument(help="A component, as for `service`.")]) -> None:
    """Exit 0 if the component runs, is connected and makes progress (for health checks)."""
    component = _known(name)
    ok, detail = healthy(load_settings().home, component)
    (terminal.console if ok else terminal.errors).print(detail)
    if not ok:
        raise typer.Exit(1)


def _known(name: str) -> str:
    """The component's full name; exit 2 naming the known ones otherwise."""
    try:
        return resolve_name(name)
    except ValueError as exc:  # one line, never wrapped: `up` reports it as the refusal
        terminal.errors.print(f"[red]{exc}[/]", soft_wrap=True, highlight=False)
        raise typer.Exit(2) from None


async def within_grace(running: Awaitable[None], stop: asyncio.Event, s: Settings) -> None:
    """Run a component; once `stop` is set it has `shutdown_grace` seconds to finish, then it
    is cancelled, and a component that ignores even that is left behind by a hard exit: a
    dead connection never holds a shutdown up."""
    task = asyncio.ensure_future(running)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            done, _ = await asyncio.wait({task}, timeout=s.shutdown_grace)
            if not done:
                terminal.errors.print(f"still stopping after {s.shutdown_grace:.0f}s: cancelling")
                task.cancel()
                done, _ = await asyncio.wait({task}, timeout=2.0)
            if not done:
                os._exit(1)
        if not task.cancelled():
            await task
    finally:
        stopping.cancel()


def stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop
