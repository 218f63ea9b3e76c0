"""What runs under the relay's and the timer service's names: the outbox relay with its
periodic work (gauges, outcomes, retention, the sweeper, reminders of human waits), and the
timer service."""

from __future__ import annotations

import asyncio

from interlock.app.connections import connect, reporting
from interlock.app.runtime import Runtime
from interlock.config.components import RELAY, TIMER
from interlock.config.plugins import installed
from interlock.relay.gauges import Gauges
from interlock.relay.outcomes import Outcomes
from interlock.relay.relay import OutboxRelay
from interlock.relay.retention import Retention
from interlock.relay.sweeper import Sweeper
from interlock.relay.timers import TimerService
from interlock.relay.waits import HumanWaits


async def run_relay(rt: Runtime, stop: asyncio.Event) -> None:
    s = rt.settings
    progress = reporting(rt, RELAY, stop)
    registry = installed().registry
    gauges = Gauges(
        rt.database_url,
        registry=registry,
        interval=s.metrics_interval,
        stuck_after=s.stuck_after,
        parameters=s.parameters,
    )
    outcomes = Outcomes(
        rt.database_url, registry=registry, window=s.slo_window, interval=s.metrics_interval
    )
    retention = Retention(
        rt.database_url,
        registry=installed().registry,
        archive_after=s.archive_after,
        forget_after=s.forget_after,
        history_after=s.history_retention,
        interval=s.retention_interval,
    )
    sampling = asyncio.create_task(gauges.run(stop))
    pruning = asyncio.create_task(retention.run(stop))
    sweeping = asyncio.create_task(Sweeper(rt.database_url, s.sweep_after).run(stop))
    waits = HumanWaits(
        rt.database_url, registry=registry, parameters=s.parameters, interval=s.metrics_interval
    )
    reminding = asyncio.create_task(waits.run(stop))
    measuring = asyncio.create_task(outcomes.run(stop))
    nc = await connect(rt, RELAY, stop)
    progress.watch(lambda: nc.is_connected)
    try:
        relay = OutboxRelay(
            rt.database_url,
            nc.jetstream(),
            batch_size=rt.settings.relay_batch_size,
            on_pass=progress.advanced,
        )
        await relay.run(stop)
    finally:
        await nc.drain()
        sampling.cancel()
        sweeping.cancel()
        reminding.cancel()
        measuring.cancel()
        pruning.cancel()


async def run_timer(rt: Runtime, stop: asyncio.Event) -> None:
    progress = reporting(rt, TIMER, stop)
    nc = await connect(rt, TIMER, stop)
    progress.watch(lambda: nc.is_connected)
    try:
        await TimerService(rt.database_url, nc.jetstream(), on_pass=progress.advanced).run(stop)
    finally:
        await nc.drain()
