"""`interlock`: run the stack, inspect workflows, send approvals and commands.

Every command honours INTERLOCK_NATS_URL / INTERLOCK_DATABASE_URL; without them it uses (or
starts) the embedded stack under INTERLOCK_HOME. Commands that report take `--json`.
Exit codes: 0 success, 1 failure or mismatch, 2 bad usage or configuration, 3 a command the
projector refused (the reason is printed).

This module only assembles the app: the commands live in `run`, `inspect` and `operate`, and
in the tools (`demo`, `bench`), which share their options through `interlock.app.options`.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from interlock.app import failures
from interlock.cli import (
    costs,
    credentials,
    describe,
    dlq,
    effects,
    evaluate,
    history,
    inspect,
    migrate,
    operate,
    pausing,
    run,
    web,
    workflows,
)
from interlock.config.plugins import installed
from interlock.tools.bench import bench
from interlock.tools.chaos import chaos
from interlock.tools.demo import demo
from interlock.tools.hostile import hostile

app = typer.Typer(
    help="Interlock: durable, guarded AI workflows on NATS JetStream and PostgreSQL.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Log at debug level; show the trace of a failure.")
    ] = False,
) -> None:
    if debug:  # through the environment, so the components `up` starts debug too
        os.environ["INTERLOCK_LOG_LEVEL"] = "DEBUG"


app.command()(run.up)
app.command()(run.service)
app.command()(inspect.show)
app.command()(inspect.trace)
app.command(name="list")(inspect.list_workflows)
app.command()(workflows.workflows)
app.command()(describe.graph)
app.command(name="console")(web.console_command)
app.command()(run.migrate)
app.command()(run.health)
app.command(name="nats-config")(credentials.nats_config)
app.command(name="client-url")(credentials.client_url)
app.command(name="replay")(history.replay_histories)
app.command(name="eval")(evaluate.eval_command)
app.command(name="costs")(costs.costs_command)
app.command(name="migrate-workflow")(migrate.migrate_workflow)
app.command()(pausing.pause)
app.command()(pausing.resume)
app.command()(pausing.paused)
app.command()(demo)
app.command()(bench)
app.command()(chaos)
app.command()(hostile)
app.add_typer(dlq.app, name="dlq")
app.command()(effects.effect)
for command in operate.COMMANDS:
    app.command()(command)


def main() -> None:
    if _asks_for_help(sys.argv[1:]):
        # A help screen names the refused plugins (one line each, on stderr): what a user
        # reads first when a workflow type is missing. Other commands load the plugins when
        # they need them, and report them then.
        installed()
    failures.run(lambda: app(prog_name="interlock"))


def _asks_for_help(arguments: list[str]) -> bool:
    return not arguments or "--help" in arguments
