"""`interlock`: run the stack, inspect workflows, send approvals and commands.

Every command honours INTERLOCK_NATS_URL / INTERLOCK_DATABASE_URL; without them it uses (or
starts) the embedded stack under INTERLOCK_HOME. Commands that report take `--json`.
Exit codes: 0 success, 1 failure or mismatch, 2 bad usage or configuration, 3 a command the
projector refused (the reason is printed).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Coroutine
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError

from interlock import console, queries, telemetry
from interlock.embedded import resolve_urls
from interlock.projector.store.engine import create_engine
from interlock.settings import Settings

T = TypeVar("T")
app = typer.Typer(
    help="Interlock: durable, guarded AI workflows on NATS JetStream and PostgreSQL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]


def settings() -> Settings:
    try:
        loaded = Settings()
    except ValidationError as exc:
        for err in exc.errors():
            console.errors.print(f"[red]configuration:[/] {err['msg']}")
        raise typer.Exit(2) from None
    configure_logging(loaded.log_level)
    return loaded


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if level.upper() != "DEBUG":
        # Per-message access logs and migration chatter drown what matters.
        for chatty in ("faststream", "alembic", "nats"):
            logging.getLogger(chatty).setLevel(logging.WARNING)


def with_stack(work: Callable[[Settings, str, str], Coroutine[Any, Any, T]]) -> T:
    """Run `work(settings, nats_url, database_url)` against the configured or embedded stack."""
    s = settings()
    with resolve_urls(s) as (nats_url, database_url):
        return asyncio.run(work(s, nats_url, database_url))


@app.command()
def up(
    only: Annotated[list[str] | None, typer.Option(help="Run only these components.")] = None,
) -> None:
    """Run projector, relay, timers, simulator, approval gateway and every stage service
    until Ctrl-C."""
    from interlock.runtime import default_components, supervised

    async def run(s: Settings, nats_url: str, database_url: str) -> None:
        stop = _stop_on_signals()
        names = only or [*default_components(), "gateway"]
        async with supervised(s, nats_url, database_url, names) as supervisor:
            console.console.print(f"NATS {nats_url}\nPostgreSQL {database_url}")
            for child in supervisor.status():
                console.console.print(f"  {child['name']:<32} pid {child['pid']}")
            console.console.print(f"logs in {s.home / 'logs'}; Ctrl-C stops everything")
            await stop.wait()

    with_stack(run)


@app.command()
def service(
    name: Annotated[
        str, typer.Argument(help="projector, relay, timer, sim, or a stage such as classify")
    ],
) -> None:
    """Run one component in the foreground (what `up` runs in each child process)."""
    from interlock.components import Runtime, components, resolve_name

    try:
        component = components()[resolve_name(name)]
    except ValueError as exc:
        console.errors.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None

    async def run(s: Settings, nats_url: str, database_url: str) -> None:
        telemetry.start(s, resolve_name(name))
        try:
            await component(Runtime(s, nats_url, database_url), _stop_on_signals())
        finally:
            telemetry.stop()

    with_stack(run)


@app.command()
def show(workflow_id: str, json_output: JsonOpt = False) -> None:
    """A workflow's state, versions, data and its full audit history."""
    view = with_stack(lambda s, n, d: _query(d, queries.workflow_view, workflow_id))
    if view is None:
        console.errors.print(f"no workflow {workflow_id}")
        raise typer.Exit(1)
    console.print_json(view) if json_output else console.workflow(view)


@app.command()
def trace(workflow_id: str, json_output: JsonOpt = False) -> None:
    """A workflow's causal tree: every hop, its duration, states and refusals."""
    from interlock.telemetry import traces_dir
    from interlock.traceview import assemble, render

    s = settings()
    view = with_stack(lambda _, n, d: _query(d, queries.workflow_view, workflow_id))
    if view is None:
        console.errors.print(f"no workflow {workflow_id}")
        raise typer.Exit(1)
    tree = assemble(view, traces_dir(s))
    if json_output:
        console.print_json(tree)
        return
    if not tree["spans"]:
        ids = ", ".join(tree["trace_ids"]) or "none recorded"
        console.errors.print(
            f"no local spans for this workflow (INTERLOCK_LOCAL_TRACES off, or "
            f"another host); look up trace {ids} in Jaeger"
        )
        raise typer.Exit(1)
    console.console.print(f"trace {tree['trace_id']} ({len(tree['spans'])} spans)")
    for line in render(tree):
        console.console.print(line, markup=False, highlight=False)


@app.command(name="list")
def list_workflows(
    *,
    state: Annotated[str | None, typer.Option(help="Only workflows in this state.")] = None,
    workflow_type: Annotated[str | None, typer.Option("--type", help="Only this type.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 50,
    json_output: JsonOpt = False,
) -> None:
    """Workflows, newest first."""
    rows = with_stack(
        lambda s, n, d: _query(
            d, queries.workflow_list, state=state, workflow_type=workflow_type, limit=limit
        )
    )
    console.print_json(rows) if json_output else console.workflows(rows)


@app.command()
def migrate() -> None:
    """Apply database migrations and provision streams (`up` and `demo` do this themselves)."""
    from interlock.runtime import prepare

    with_stack(lambda s, n, d: prepare(n, d))
    console.console.print("database schema and JetStream streams are up to date")


@app.command()
def health(name: Annotated[str, typer.Argument(help="A component, as for `service`.")]) -> None:
    """Exit 0 if the component is attached to the broker (for container health checks)."""
    from interlock.components import resolve_name
    from interlock.health import attached

    try:
        component = resolve_name(name)
    except ValueError as exc:
        console.errors.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    ok, detail = with_stack(lambda s, n, d: attached(component, n))
    (console.console if ok else console.errors).print(detail)
    if not ok:
        raise typer.Exit(1)


async def _query(
    database_url: str, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any
) -> T:
    engine = create_engine(database_url, pool_size=1)
    try:
        return await fn(engine, *args, **kwargs)
    finally:
        await engine.dispose()


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


def register_extra_commands() -> None:
    from interlock.cli import operate as operator_cli
    from interlock.tools.bench import bench
    from interlock.tools.demo import demo

    app.command()(demo)
    app.command()(bench)
    operator_cli.register(app)


def main() -> None:
    register_extra_commands()
    app(prog_name="interlock")


if __name__ == "__main__":
    main()
