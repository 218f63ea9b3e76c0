"""What runs under the projector's names: the one projector, or each partition of several.

Each runner module is imported only by the process that runs its components (`runners`), so
a projector does not load the console's, the gateway's or the relay's libraries at start."""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress
from datetime import timedelta

from interlock.app.connections import broker, reporting
from interlock.app.runtime import Component, Runtime, wait_at_most
from interlock.config.access import (
    client_policies,
    gateway_claims_public_key,
    job_signing_key,
)
from interlock.config.plugins import installed
from interlock.contracts.errors import ConfigurationError, StoreUnavailable
from interlock.contracts.graphcheck import assert_valid
from interlock.contracts.partitions import PROJECTOR, partition_of_component
from interlock.contracts.partitions import components as partition_components
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


async def run_partition_host(rt: Runtime, stop: asyncio.Event) -> None:
    """Run every partition of the layout in this process (`projectors`), each as it runs
    alone: its own consumers, connections, store and health report under its own name.

    They stop together: on `stop`, or as soon as one of them ends, when the others drain as
    on SIGTERM (within the shutdown grace, then cancelled) and the process exits with the
    first one's error, to be restarted whole."""
    halt = asyncio.Event()  # the partitions' stop: `stop`, or one of them ended
    running = [
        asyncio.create_task(run_projector(rt, halt, name), name=name)
        for name in partition_components(rt.settings.projector_partitions)
    ]
    stopping = asyncio.create_task(stop.wait())
    try:
        ended, _ = await asyncio.wait([*running, stopping], return_when=asyncio.FIRST_COMPLETED)
        halt.set()
        _, late = await asyncio.wait(running, timeout=rt.settings.shutdown_grace)
        for task in late:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
    finally:
        stopping.cancel()
        for task in running:  # cancelled ourselves: take the partitions along
            task.cancel()
    if stop.is_set():
        return
    first = next(task for task in running if task in ended)
    if not first.cancelled() and (error := first.exception()) is not None:
        raise error
    raise RuntimeError(f"{first.get_name()} stopped on its own; stopping the partition host")


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
        await wait_at_most(stop.wait(), backoff.delay(attempt))
