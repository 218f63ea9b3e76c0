"""Bringing a stack to life: schema, streams, and the supervised component processes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import nats

from interlock.health import wait_until_ready
from interlock.messaging.streams import all_stages, provision
from interlock.projector.store.migrate import upgrade_async
from interlock.settings import Settings
from interlock.supervisor import Supervisor

CORE = ["projector", "relay", "timer", "sim"]


def default_components(*workflow_types: str) -> list[str]:
    """Core components plus the stage services of `workflow_types` (default: all)."""
    return [
        *CORE,
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
    settings: Settings, nats_url: str, database_url: str, names: list[str] | None = None
) -> AsyncIterator[Supervisor]:
    """Run the components (all by default) as child processes for the duration."""
    await prepare(nats_url, database_url)
    env = {
        "INTERLOCK_NATS_URL": nats_url,
        "INTERLOCK_DATABASE_URL": database_url,
        "INTERLOCK_HOME": str(settings.home.resolve()),
    }
    names = names or default_components()
    supervisor = Supervisor(names, env, settings.home / "logs")
    await supervisor.start()
    try:
        await wait_until_ready(nats_url, names)
        yield supervisor
    finally:
        await supervisor.stop()
