"""Every component as a task of the test process: for tests that must observe the whole stack
from inside (an in-memory span exporter or metric reader sees what every component does)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from interlock.app.bootstrap import prepare
from interlock.app.composition import default_stack
from interlock.app.health import wait_until_ready
from interlock.app.runners import components
from interlock.app.runtime import Runtime
from interlock.config.settings import Settings
from interlock.simulators import ensure_schema


@asynccontextmanager
async def stack_in_process(
    settings: Settings, nats_url: str, database_url: str, *workflow_types: str
) -> AsyncIterator[None]:
    await prepare(nats_url, database_url)
    await ensure_schema(database_url)
    names = default_stack(*workflow_types)
    runtime = Runtime(settings, nats_url, database_url)
    stop = asyncio.Event()
    tasks = [asyncio.ensure_future(components()[name](runtime, stop)) for name in names]
    try:
        await wait_until_ready(nats_url, names)
        yield
    finally:
        stop.set()
        for task in tasks:
            with suppress(asyncio.CancelledError):
                await asyncio.wait_for(task, 15)
