"""What every command shares, the CLI's and the tools' alike: the `--json` option, loading
settings (exit 2 on bad configuration), logging, and running work against the configured or
embedded stack."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError

from interlock import terminal
from interlock.embedded import resolve_urls
from interlock.settings import Settings

T = TypeVar("T")
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON on stdout.")]


def load_settings() -> Settings:
    """The process settings, with logging configured; exit 2 naming what is wrong."""
    try:
        loaded = Settings()
    except ValidationError as exc:
        for err in exc.errors():
            terminal.errors.print(f"[red]configuration:[/] {err['msg']}")
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
    s = load_settings()
    with resolve_urls(s) as (nats_url, database_url):
        return asyncio.run(work(s, nats_url, database_url))
