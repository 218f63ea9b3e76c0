"""The runnable components of Interlock: each runs until its stop event is set.

`interlock up` runs each in its own process (see `supervisor`), so one can crash, be killed or
be restarted without the others (on a small machine the stage services share one, the stage
host); `interlock service NAME` runs one in the foreground. Which
names a stack is made of is `composition`'s business; this module says what runs under each.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable
from contextlib import suppress
from datetime import timedelta
from typing import cast

from interlock import console
from interlock.app.bootstrap import Component, Runtime
from interlock.app.connections import broker, connect, connection_options, reporting
from interlock.app.startup import require_free_ports
from interlock.config import components as table
from interlock.config.access import (
    client_policies,
    gateway_claims_key,
    gateway_claims_public_key,
    job_signing_key,
)
from interlock.config.components import CONSOLE, GATEWAY, RELAY, SIMULATOR, TIMER
from interlock.config.plugins import installed
from interlock.contracts.errors import ConfigurationError, StoreUnavailable
from interlock.contracts.graphcheck import assert_valid
from interlock.contracts.partitions import PROJECTOR, partition_of_component
from interlock.messaging.backoff import Backoff
from interlock.projector.claims import ClaimVerifier
from interlock.projector.consumer import Patience
from interlock.projector.consumer import run as consume_inbound
from interlock.projector.dispatch import ASIDE_SLOTS
from interlock.projector.door import OccurredWindow
from interlock.projector.engine import ACTIONS, GUARDS
from interlock.projector.outbox import OutboxPublisher
from interlock.projector.partitioning import Owner
from interlock.projector.service import Projector
from interlock.projector.signing import JobSigner
from interlock.projector.store.postgres import PostgresWorkflowStore, open_store
from interlock.projector.store.status import StatusReader
from interlock.relay.gauges import Gauges
from interlock.relay.outcomes import Outcomes
from interlock.relay.relay import OutboxRelay
from interlock.relay.retention import Retention
from interlock.relay.sweeper import Sweeper
from interlock.relay.timers import TimerService
from interlock.relay.waits import HumanWaits
from interlock.services.gateway import Limits
from interlock.services.gateway import run_gateway as serve_gateway
from interlock.simulators import run_simulator

log = logging.getLogger("interlock")


def check_definitions() -> None:
    """Refuse to start on a definition that fails the graph check (clear message)."""
    registry = installed().registry
    for definition in registry:
        # a plugin's own guards are as known to its rows as the built-in ones
        guards = {*GUARDS, *registry.guards(definition.workflow_type)}
        assert_valid(definition, guards, ACTIONS)


async def run_projector(rt: Runtime, stop: asyncio.Event, name: str = PROJECTOR) -> None:
    """Run projector component `name`: `projector`, or partition `projector.<k>` of
    `INTERLOCK_PROJECTOR_PARTITIONS` (refused when it is not one of that layout)."""
    try:
        partition = partition_of_component(name, rt.settings.projector_partitions)
    except ValueError as exc:
        raise ConfigurationError(str(exc), hint="run the projectors of that layout") from None
    check_definitions()
    progress = reporting(rt, name, stop)
    store = await _store_when_up(rt, stop)
    nats_broker = broker(rt, name, stop)
    registry = installed().registry
    projector = Projector(
        store,
        registry=registry,
        parameters=rt.settings.parameters,
        clients=client_policies(rt.settings),
        signer=JobSigner(job_signing_key(rt.settings)),
        sender_claims=ClaimVerifier(gateway_claims_public_key(rt.settings)),
        occurred_window=OccurredWindow(
            past=timedelta(days=rt.settings.occurred_at_past_days),
            future=timedelta(seconds=rt.settings.occurred_at_future_s),
        ),
    )
    patience = Patience(unknown_workflow_grace=rt.settings.unknown_workflow_grace)
    publisher: OutboxPublisher | None = None
    marking: asyncio.Task[None] | None = None
    try:
        await nats_broker.start()
        progress.watch(lambda: nats_broker.connection.is_connected)
        if rt.settings.publish_grace > 0:
            js = nats_broker.connection.jetstream()
            grace = rt.settings.publish_grace
            publisher = await OutboxPublisher.open(js, store.pool, grace)
            store.publish_after_commit(publisher)
            marking = asyncio.create_task(publisher.keep_marking(stop))
        await consume_inbound(
            nats_broker,
            projector,
            stop,
            workers=rt.settings.projector_workers,
            patience=patience,
            progress=progress,
            owner=Owner(partition, registry),
        )
    finally:
        if marking is not None:
            marking.cancel()
            with suppress(asyncio.CancelledError):
                await marking
        if publisher is not None:
            await publisher.flush_marks()  # what no commit carried, before the pool closes
        await nats_broker.stop()
        await store.close()


def projector_partition(name: str) -> Component:
    async def run(rt: Runtime, stop: asyncio.Event) -> None:
        await run_projector(rt, stop, name)

    return run


async def _store_when_up(rt: Runtime, stop: asyncio.Event) -> PostgresWorkflowStore:
    """The projector's store, once the database answers: a projector (re)started during a
    database outage waits for it rather than exiting into its supervisor's growing restart
    delay, so it decides again the moment the database is back."""
    backoff, attempt = Backoff(base=0.1, cap=1.0), 0
    while True:
        try:
            # A connection for every decision the dispatcher runs at once (`ASIDE_SLOTS`).
            size = rt.settings.projector_workers + ASIDE_SLOTS
            batch = rt.settings.commit_batch
            return await open_store(rt.database_url, size=size, batch=batch, warm=True)
        except StoreUnavailable as exc:
            if stop.is_set():
                raise
            attempt += 1
            log.warning("projector: %s; waiting for the database (attempt %d)", exc, attempt)
        await _wait(stop.wait(), backoff.delay(attempt))


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
        await _wait(stop.wait(), backoff.delay(attempt))


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


async def _wait(awaitable: Awaitable[object], seconds: float) -> None:
    with suppress(TimeoutError):
        await asyncio.wait_for(awaitable, seconds)


def components() -> dict[str, Component]:
    """Every component by name, each row of the table of components with its runner: the
    core services, the extras, the stage services and the stage host (the partitions of a
    partitioned projector: `component`)."""
    return {row.name: _runner(row, row.name) for row in table.rows()}


def component(name: str) -> Component:
    """What runs under `name`: its row's runner (a projector partition's is the projector's,
    given the partition's name); KeyError for a name no row has or a stage not installed."""
    row = table.row_of(name)
    if row.stage is not None and row.stage not in installed().registry.stages():
        raise KeyError(name)
    return _runner(row, name)


def _runner(row: table.Component, name: str) -> Component:
    """The runner `row` names ("module:attr"), imported only now; a per-name row's is the
    component its function makes of `name`."""
    module, _, attr = row.runner.partition(":")
    found = getattr(importlib.import_module(module), attr)
    return cast(Component, found(name) if row.per_name else found)
