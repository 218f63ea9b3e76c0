"""Serving the console (`interlock console`, and the `console` component of `interlock up`)
with uvicorn until the stop event is set."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

import uvicorn

from interlock.config.settings import Settings
from interlock.config.stackfile import StackRecord
from interlock.console.address import console_url
from interlock.console.app import create_app
from interlock.console.devsecrets import ConsoleSecrets
from interlock.console.operators import configured_operators
from interlock.contracts.registry import Registry

log = logging.getLogger("interlock.console")


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers: the stop event ends the server, as it does every
    other component."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def on_embedded_stack(settings: Settings, database_url: str) -> bool:
    """Whether `database_url` is the embedded PostgreSQL of this home (as `stack.json` records
    it): only there does the console make a development operator."""
    try:
        record = StackRecord.model_validate_json((settings.home / "stack.json").read_text())
    except (OSError, ValueError):
        return False
    # The console connects as its own role: compare the server and database, not the user.
    return _server(record.database_url) == _server(database_url)


def _server(url: str) -> tuple[str | None, int | None, str]:
    parts = urlsplit(url)
    return parts.hostname, parts.port, parts.path


async def serve(
    settings: Settings,
    nats_url: str,
    database_url: str,
    stop: asyncio.Event,
    *,
    registry: Registry,
) -> None:
    """Serve `registry`'s workflow types until `stop` is set. Operators come from the
    configuration, or, with the embedded stack (no database URL configured), the development
    operator."""
    secrets = ConsoleSecrets(settings.home, settings.secrets_dir)
    embedded = on_embedded_stack(settings, database_url)
    app = create_app(
        settings,
        nats_url,
        database_url,
        registry=registry,
        operators=configured_operators(settings, secrets, embedded, registry),
        session_key=secrets.session_key(),
    )
    config = uvicorn.Config(
        app,
        host=settings.console_host,
        port=settings.console_port,
        log_level="warning",
        access_log=False,
        lifespan="on",
    )
    server = _Server(config)
    serving = asyncio.create_task(server.serve())
    log.info("console on %s", console_url(settings))
    await asyncio.wait(
        [serving, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED
    )
    server.should_exit = True
    await serving
