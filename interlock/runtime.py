"""Bringing a stack to life: what every component is given, schema and streams, and the
supervised component processes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import nats

from interlock.health import wait_until_ready
from interlock.messaging.streams import all_stages, provision
from interlock.projector.store.migrate import upgrade_async
from interlock.settings import Settings
from interlock.supervisor import Supervisor


@dataclass(frozen=True)
class Runtime:
    """What every component needs: settings and the resolved URLs."""

    settings: Settings
    nats_url: str
    database_url: str


Component = Callable[[Runtime, asyncio.Event], Awaitable[None]]
"""A runnable part of the stack: it runs until its stop event is set."""

CORE = ["projector", "relay", "timer"]
"""The runtime's own components. With the stage services of the installed workflow types they
decide, record, publish and time everything; outside systems are composed in by the root."""


def default_components(*workflow_types: str, extras: Sequence[str] = ()) -> list[str]:
    """The core components, then `extras`, then the stage services of `workflow_types`
    (default: every installed type)."""
    return [
        *CORE,
        *extras,
        *(f"{t}.{s}" for t, s in all_stages() if not workflow_types or t in workflow_types),
    ]


async def prepare(nats_url: str, database_url: str) -> None:
    """Apply migrations and provision streams; idempotent, safe from several processes."""
    await upgrade_async(database_url)
    nc = await nats.connect(nats_url, name="interlock-prepare")
    try:
        await provision(nc.jetstream())
    finally:
        await nc.drain()


@asynccontextmanager
async def supervised(
    settings: Settings, nats_url: str, database_url: str, names: list[str]
) -> AsyncIterator[Supervisor]:
    """Run the named components as child processes for the duration."""
    await prepare(nats_url, database_url)
    env = {
        "INTERLOCK_NATS_URL": nats_url,
        "INTERLOCK_DATABASE_URL": database_url,
        "INTERLOCK_HOME": str(settings.home.resolve()),
    }
    supervisor = Supervisor(names, env, settings.home / "logs")
    await supervisor.start()
    try:
        await wait_until_ready(nats_url, names)
        yield supervisor
    finally:
        await supervisor.stop()
