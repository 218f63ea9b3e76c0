"""How every component connects to NATS and reports its health: the connection options
that never leave a live process with a dead connection, and the health report it writes."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import nats
from faststream.nats import NatsBroker
from nats.aio.client import Client

from interlock.app.options import BROKER_LOGGER
from interlock.app.runtime import Runtime
from interlock.contracts.urls import nats_servers
from interlock.messaging.progress import Progress

log = logging.getLogger("interlock")
EXIT_CONNECTION_LOST = 75
"""Exit status of a component whose broker connection closed for good (EX_TEMPFAIL): its
supervisor, or compose, starts it again."""
CLOSED_GRACE = 2.0
"""Seconds between a connection closing and that exit: time for a component that is failing
on its own account to end with its own error first."""


def connection_options(name: str, stop: asyncio.Event) -> dict[str, Any]:
    """How every component connects to NATS: reconnect without limit (an outage of any length
    is waited out), and if the connection closes anyway while the component is meant to be
    running, exit so that the supervisor restarts it: never a live process with a dead
    connection."""

    def still_running() -> None:
        if not stop.is_set():
            log.error("%s: broker connection closed for good; exiting to be restarted", name)
            for handler in logging.getLogger().handlers:
                handler.flush()
            os._exit(EXIT_CONNECTION_LOST)

    async def closed() -> None:
        # Not at once: a component failing on its own (an adapter it cannot build, a port in
        # use) closes its connection while it unwinds, and its own error, reported by the
        # CLI's error path, is the one to tell. If the process is still running after that
        # grace, the connection really closed under it.
        if not stop.is_set():
            asyncio.get_running_loop().call_later(CLOSED_GRACE, still_running)

    return {
        "name": f"interlock-{name}",
        "max_reconnect_attempts": -1,
        "reconnect_time_wait": 1.0,
        "closed_cb": closed,
    }


async def connect(rt: Runtime, name: str, stop: asyncio.Event) -> Client:
    return await nats.connect(
        nats_servers(rt.nats_url), inbox_prefix=rt.inbox_prefix, **connection_options(name, stop)
    )


def broker(rt: Runtime, name: str, stop: asyncio.Event) -> NatsBroker:
    return NatsBroker(
        nats_servers(rt.nats_url),
        inbox_prefix=rt.inbox_prefix,
        logger=logging.getLogger(BROKER_LOGGER),
        log_level=logging.DEBUG,
        graceful_timeout=rt.settings.shutdown_grace / 2,
        **connection_options(name, stop),
    )


def reporting(rt: Runtime, name: str, stop: asyncio.Event) -> Progress:
    """The component's health report, written under the home until `stop` (see `health`)."""
    progress = Progress.of(rt.settings.home, name)
    task = asyncio.create_task(progress.run(stop))
    _background.add(task)
    task.add_done_callback(_background.discard)
    return progress


_background: set[asyncio.Task[None]] = set()
