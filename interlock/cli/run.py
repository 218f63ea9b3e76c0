"""Running the stack: every component (`up`) and the schema and streams (`migrate`). One
component in the foreground and its health are `interlock.cli.component`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import interlock
from interlock import console
from interlock.app import terminal
from interlock.app.bootstrap import prepare, supervised
from interlock.app.composition import stack_of
from interlock.app.devsender import with_dev_sender
from interlock.app.endpoints import ENDPOINTS, write_endpoints
from interlock.app.options import load_settings, with_stack
from interlock.app.startup import (
    require_free_ports,
    shadowing_directory,
    without_taken_metrics_port,
)
from interlock.app.uplock import only_up
from interlock.cli.component import known, require_valid_adapters, stop_on_signals
from interlock.config.access import component_roles
from interlock.config.components import CONSOLE, GATEWAY, PARTITION_HOST, placed
from interlock.config.settings import Settings
from interlock.config.telemetry import SCRAPED
from interlock.contracts.errors import ConfigurationError
from interlock.contracts.partitions import is_projector, partition_of_component


def up(
    only: Annotated[list[str] | None, typer.Option(help="Run only these components.")] = None,
) -> None:
    """Run projector, relay, timers, simulator, approval gateway, operator console and every
    stage service until Ctrl-C (the stage services in one process on a small machine:
    INTERLOCK_STAGE_HOST; several projector partitions too: INTERLOCK_PROJECTOR_HOST).
    `--only` takes the names `service` takes, checked before anything starts."""
    only = [known(name) for name in only] if only else None

    async def run(s: Settings, nats_url: str, database_url: str) -> None:
        stop = stop_on_signals()
        stack = stack_of(s)
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
            if CONSOLE in names:  # serving: `supervised` waited for every HTTP server
                banner = console.banner(s, embedded=s.database_url is None)
                terminal.console.print(banner, markup=False, highlight=False, soft_wrap=True)
            terminal.console.print(f"logs in {s.home / 'logs'}; Ctrl-C stops everything")
            await stop.wait()

    settings, sender_line = with_dev_sender(load_settings())
    require_valid_adapters(settings)
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


def _check_layout(names: list[str], partitions: int) -> None:
    """Refuse (one line, exit 2) a projector partition that is not one of the configured
    layout's, and partitions named beside the partition host, which runs them already."""
    if PARTITION_HOST in names and any(is_projector(name) for name in names):
        raise ConfigurationError(
            f"{PARTITION_HOST} runs every projector partition already",
            hint=f"name either {PARTITION_HOST} or the partitions",
        )
    for name in names:
        if is_projector(name) and name != "projector":  # `projector`: every partition
            try:
                partition_of_component(name, partitions)
            except ValueError as exc:
                raise ConfigurationError(str(exc), hint="choose that layout's names") from None


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
