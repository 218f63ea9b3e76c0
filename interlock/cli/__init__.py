"""`interlock`: run the stack, inspect workflows, send approvals and commands.

Every command honours INTERLOCK_NATS_URL / INTERLOCK_DATABASE_URL; without them it uses (or
starts) the embedded stack under INTERLOCK_HOME. Commands that report take `--json`.
Exit codes: 0 success, 1 failure or mismatch, 2 bad usage or configuration, 3 a command the
projector refused (the reason is printed).

This module only assembles the app: the commands live in `run`, `inspect`, `operate` and the
rest of this package, and in the tools (`demo`, `bench`, `chaos`, `hostile`), which share their
options through `interlock.app.options`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from importlib import import_module
from typing import Annotated, Any

import typer

from interlock.app import failures
from interlock.config.plugins import installed

COMMANDS: dict[str, str] = {
    "up": "interlock.cli.run:up",
    "service": "interlock.cli.component:service",
    "show": "interlock.cli.inspect:show",
    "trace": "interlock.cli.inspect:trace",
    "list": "interlock.cli.inspect:list_workflows",
    "workflows": "interlock.cli.workflows:workflows",
    "graph": "interlock.cli.describe:graph",
    "console": "interlock.cli.web:console_command",
    "migrate": "interlock.cli.run:migrate",
    "repartition": "interlock.cli.repartition:repartition",
    "health": "interlock.cli.component:health",
    "nats-config": "interlock.cli.credentials:nats_config",
    "client-url": "interlock.cli.credentials:client_url",
    "replay": "interlock.cli.history:replay_histories",
    "eval": "interlock.cli.evaluate:eval_command",
    "costs": "interlock.cli.costs:costs_command",
    "migrate-workflow": "interlock.cli.migrate:migrate_workflow",
    "pause": "interlock.cli.pausing:pause",
    "resume": "interlock.cli.pausing:resume",
    "paused": "interlock.cli.pausing:paused",
    "demo": "interlock.tools.demo:demo",
    "bench": "interlock.tools.bench:bench",
    "chaos": "interlock.tools.chaos:chaos",
    "hostile": "interlock.tools.hostile:hostile",
    "effect": "interlock.cli.effects:effect",
    "signal": "interlock.cli.operate:signal",
    "approve": "interlock.cli.operate:approve",
    "reject": "interlock.cli.operate:reject",
    "cancel": "interlock.cli.operate:cancel",
    "retry": "interlock.cli.operate:retry",
}
"""Every command, in the order `--help` lists them: its name and where it is defined. A
command's module is imported only when that command runs (or help lists them all): the
modules between them import most of the runtime, and `interlock show` should not pay for
`interlock bench`."""
GROUPS: dict[str, str] = {"dlq": "interlock.cli.dlq:app"}
"""Commands with subcommands of their own, by the same rule."""


def _root(
    debug: Annotated[
        bool, typer.Option("--debug", help="Log at debug level; show the trace of a failure.")
    ] = False,
) -> None:
    if debug:  # through the environment, so the components `up` starts debug too
        os.environ["INTERLOCK_LOG_LEVEL"] = "DEBUG"


def _load(where: str) -> Any:
    module, _, attr = where.partition(":")
    loaded = import_module(module)
    found = getattr(loaded, attr, None)
    if found is None:  # a command built by a factory, listed in its module's COMMANDS
        found = next(c for c in loaded.COMMANDS if c.__name__ == attr)
    return found


def build(names: Iterable[str] | None = None) -> typer.Typer:
    """The CLI with the commands and groups `names` (None: all of them)."""
    wanted = None if names is None else set(names)
    cli = typer.Typer(
        help="Interlock: durable, guarded AI workflows on NATS JetStream and PostgreSQL.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    cli.callback()(_root)
    for name, where in COMMANDS.items():
        if wanted is None or name in wanted:
            command: Callable[..., Any] = _load(where)
            cli.command(name=name)(command)
    for name, where in GROUPS.items():
        if wanted is None or name in wanted:
            cli.add_typer(_load(where), name=name)
    return cli


def __getattr__(name: str) -> Any:
    if name == "app":  # the whole CLI, for tests that invoke it in process
        return build()
    raise AttributeError(f"module 'interlock.cli' has no attribute {name!r}")


def main() -> None:
    arguments = sys.argv[1:]
    if _asks_for_help(arguments):
        # A help screen names the refused plugins (one line each, on stderr): what a user
        # reads first when a workflow type is missing. Other commands load the plugins when
        # they need them, and report them then.
        installed()
    named = _command_named(arguments)
    cli = build(None if named is None or _asks_for_help(arguments[:1]) else [named])
    failures.run(lambda: cli(prog_name="interlock"))


def _command_named(arguments: list[str]) -> str | None:
    """The command the arguments name (after the root's own options), if it is one."""
    for argument in arguments:
        if argument.startswith("-"):
            continue
        return argument if argument in COMMANDS or argument in GROUPS else None
    return None


def _asks_for_help(arguments: list[str]) -> bool:
    return not arguments or "--help" in arguments
