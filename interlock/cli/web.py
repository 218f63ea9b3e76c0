"""The operator console in the foreground (`interlock console`), and the password hashes its
configuration holds (`--hash-password`)."""

from __future__ import annotations

from typing import Annotated

import typer

from interlock import console
from interlock.app import terminal
from interlock.app.options import load_settings, with_component
from interlock.cli.component import stop_on_signals
from interlock.cli.history import installed_registry
from interlock.config import telemetry
from interlock.config.access import CONSOLE
from interlock.config.settings import Settings
from interlock.console.operators import hash_password


def console_command(
    hash_only: Annotated[
        bool,
        typer.Option(
            "--hash-password",
            help="Read a password (prompted, not echoed) and print its argon2 hash for "
            "INTERLOCK_CONSOLE_OPERATORS, then exit.",
        ),
    ] = False,
) -> None:
    """Serve the operator console (INTERLOCK_CONSOLE_HOST/_PORT, default 127.0.0.1:8090)
    until Ctrl-C; `interlock up` runs it too."""
    if hash_only:
        load_settings()
        password = typer.prompt("password", hide_input=True, confirmation_prompt=True)
        print(hash_password(password))
        return

    async def run(s: Settings, nats_url: str, database_url: str | None) -> None:
        assert database_url is not None  # the console has a database role
        stop = stop_on_signals()
        telemetry.start(s, CONSOLE)
        terminal.console.print(
            console.banner(s, embedded=s.database_url is None), markup=False, soft_wrap=True
        )
        try:
            await console.serve(s, nats_url, database_url, stop, registry=installed_registry())
        finally:
            telemetry.stop()

    # As `up` runs it: its own broker identity and read-only database role, never the admin.
    with_component(CONSOLE, run)
