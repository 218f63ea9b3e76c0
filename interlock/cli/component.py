"""Running one component in the foreground (`service`, what `up` runs in each child process)
and asking one for its health (`health`). Light on purpose: every component process starts
here, so nothing that only brings a stack up (migrations, provisioning, the supervisor, the
console's application) is imported."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable
from typing import Annotated

import typer

from interlock.app import terminal
from interlock.app.composition import resolve_name
from interlock.app.health import healthy
from interlock.app.options import load_settings, with_component
from interlock.app.runtime import Runtime
from interlock.config import telemetry
from interlock.config.components import PARTITION_HOST, STAGE_HOST, placed
from interlock.config.settings import Settings


def service(
    name: Annotated[
        str,
        typer.Argument(
            help=f"{', '.join([*placed('core'), *placed('extra')])}, {STAGE_HOST} (every stage "
            f"service in one process), {PARTITION_HOST} (every projector partition in one "
            "process), projector.K (one partition of several), or a stage such as classify"
        ),
    ],
) -> None:
    """Run one component in the foreground (what `up` runs in each child process)."""
    component_name = known(name)
    # What runs the components brings in every library they use (FastStream, aiohttp, the
    # stages and their clients): ~0.3 s that every other command would pay at start-up.
    from interlock.app.runners import component as runnable  # noqa: PLC0415

    component = runnable(component_name)

    async def run(s: Settings, nats_url: str, database_url: str | None) -> None:
        require_valid_adapters(s)
        telemetry.start(s, component_name)
        stop = stop_on_signals()
        try:
            await within_grace(component(Runtime(s, nats_url, database_url), stop), stop, s)
        finally:
            telemetry.stop()

    with_component(component_name, run)


def health(name: Annotated[str, typer.Argument(help="A component, as for `service`.")]) -> None:
    """Exit 0 if the component runs, is connected and makes progress (for health checks)."""
    component = known(name)
    s = load_settings()
    ok, detail = healthy(s.home, component, partitions=s.projector_partitions)
    (terminal.console if ok else terminal.errors).print(detail)
    if not ok:
        raise typer.Exit(1)


def known(name: str) -> str:
    """The component's full name; exit 2 naming the known ones otherwise."""
    try:
        return resolve_name(name)
    except ValueError as exc:  # one line, never wrapped: `up` reports it as the refusal
        terminal.errors.print(f"[red]{exc}[/]", soft_wrap=True, highlight=False)
        raise typer.Exit(2) from None


def require_valid_adapters(s: Settings) -> None:
    """Refuse (`ConfigurationError`: one line, exit 2 through the CLI's error path) an
    `INTERLOCK_ADAPTERS` that names an unknown type, port or adapter, or configures one
    wrongly."""
    # The plugins are loaded only by the commands that run the stack.
    from interlock.app.bindings import check_adapters  # noqa: PLC0415
    from interlock.config.plugins import installed  # noqa: PLC0415

    check_adapters(s.adapters, installed())


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
