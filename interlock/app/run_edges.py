"""What runs at the stack's edges: the simulated outside systems, the approval and webhook
gateway and the operator console."""

from __future__ import annotations

import asyncio
import logging

from interlock import console
from interlock.app.connections import connection_options, reporting
from interlock.app.runtime import Runtime, wait_at_most
from interlock.app.startup import require_free_ports
from interlock.config.access import (
    gateway_claims_key,
)
from interlock.config.components import CONSOLE, GATEWAY, SIMULATOR
from interlock.config.plugins import installed
from interlock.messaging.backoff import Backoff
from interlock.projector.store.status import StatusReader
from interlock.services.gateway import Limits
from interlock.services.gateway import run_gateway as serve_gateway
from interlock.simulators import run_simulator

log = logging.getLogger("interlock")


async def run_sim(rt: Runtime, stop: asyncio.Event) -> None:
    progress = reporting(rt, SIMULATOR, stop)
    backoff, attempt = Backoff(base=0.1, cap=1.0), 0
    while not stop.is_set():
        try:
            await run_simulator(
                rt.database_url,
                rt.nats_url,
                stop,
                connection=connection_options(SIMULATOR, stop),
                on_connect=lambda nc: progress.watch(
                    lambda: nc.is_connected, connection_is_progress=True
                ),
            )
            return
        except OSError as exc:
            # Started while its database is down: wait here rather than exit into the
            # supervisor's growing restart delay, so the outside systems are back as soon as
            # the database is.
            attempt += 1
            log.warning("simulator: database unreachable (%r); retrying", exc)
        await wait_at_most(stop.wait(), backoff.delay(attempt))


async def run_gateway(rt: Runtime, stop: asyncio.Event) -> None:
    settings = rt.settings
    progress = reporting(rt, GATEWAY, stop)
    # Its role may only run the read of a workflow's state and an event's outcome.
    reader = StatusReader(rt.database_url_or_none) if rt.database_url_or_none else None
    try:
        await serve_gateway(
            rt.nats_url,
            host=settings.gateway_host,
            port=settings.gateway_port,
            senders=settings.gateway_senders,
            stop=stop,
            workflows=installed().registry,
            limits=Limits(settings.gateway_sender_rate, settings.gateway_unauthenticated_rate),
            connection=connection_options(GATEWAY, stop),
            on_connect=lambda nc: progress.watch(
                lambda: nc.is_connected, connection_is_progress=True
            ),
            read_status=reader,
            claim_key=gateway_claims_key(rt.settings),
        )
    finally:
        if reader is not None:
            await reader.close()


async def run_console(rt: Runtime, stop: asyncio.Event) -> None:
    registry = installed().registry
    require_free_ports(rt.settings, [CONSOLE])  # one line (exit 2), not a crash loop
    await console.serve(rt.settings, rt.nats_url, rt.database_url, stop, registry=registry)
