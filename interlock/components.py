"""The runnable components of Interlock: each runs until its stop event is set.

`interlock up` runs each in its own process (see `supervisor`), so one can crash, be killed or
be restarted without the others; `interlock service NAME` runs one in the foreground. Which
names a stack is made of is `composition`'s business; this module says what runs under each.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack

import nats
from faststream.nats import NatsBroker

from interlock.access import client_policies, job_public_key, job_signing_key
from interlock.composition import GATEWAY, SIMULATOR
from interlock.contracts import registry
from interlock.contracts.graphcheck import assert_valid
from interlock.messaging.streams import all_stages
from interlock.projector.consumer import run as consume_inbound
from interlock.projector.engine import ACTIONS, GUARDS
from interlock.projector.service import Projector
from interlock.projector.signing import JobSigner
from interlock.projector.store.postgres import open_store
from interlock.relay.gauges import Gauges
from interlock.relay.relay import OutboxRelay
from interlock.relay.retention import Retention
from interlock.relay.timers import TimerService
from interlock.runtime import Component, Runtime
from interlock.services.gateway import Limits
from interlock.services.gateway import run_gateway as serve_gateway
from interlock.services.runtime.admission import JobAdmission
from interlock.services.runtime.openjobs import OpenJobsReader
from interlock.services.runtime.signatures import JobVerifier
from interlock.services.runtime.stage import register
from interlock.simulators import run_simulator
from interlock.wiring import stage_handlers

log = logging.getLogger("interlock")


def check_definitions() -> None:
    """Refuse to start on a definition that fails the graph check (clear message)."""
    for definition in registry.DEFINITIONS.values():
        assert_valid(definition, GUARDS, ACTIONS)


def broker(rt: Runtime, name: str) -> NatsBroker:
    return NatsBroker(
        rt.nats_url,
        name=f"interlock-{name}",
        inbox_prefix=rt.inbox_prefix,
        log_level=logging.DEBUG,
        graceful_timeout=10.0,
    )


async def run_projector(rt: Runtime, stop: asyncio.Event) -> None:
    check_definitions()
    store = await open_store(rt.database_url, size=rt.settings.projector_workers)
    nats_broker = broker(rt, "projector")
    projector = Projector(
        store,
        parameters=rt.settings.parameters,
        clients=client_policies(rt.settings),
        signer=JobSigner(job_signing_key(rt.settings)),
    )
    try:
        await nats_broker.start()
        await consume_inbound(nats_broker, projector, stop, workers=rt.settings.projector_workers)
    finally:
        await nats_broker.stop()
        await store.close()


async def run_relay(rt: Runtime, stop: asyncio.Event) -> None:
    s = rt.settings
    gauges = Gauges(rt.database_url, stuck_after=s.stuck_after)
    retention = Retention(
        rt.database_url,
        archive_after=s.archive_after,
        forget_after=s.forget_after,
        interval=s.retention_interval,
    )
    sampling = asyncio.create_task(gauges.run(stop))
    pruning = asyncio.create_task(retention.run(stop))
    nc = await nats.connect(rt.nats_url, name="interlock-relay", inbox_prefix=rt.inbox_prefix)
    try:
        relay = OutboxRelay(
            rt.database_url, nc.jetstream(), batch_size=rt.settings.relay_batch_size
        )
        await relay.run(stop)
    finally:
        await nc.drain()
        sampling.cancel()
        pruning.cancel()


async def run_timer(rt: Runtime, stop: asyncio.Event) -> None:
    nc = await nats.connect(rt.nats_url, name="interlock-timer", inbox_prefix=rt.inbox_prefix)
    try:
        await TimerService(rt.database_url, nc.jetstream()).run(stop)
    finally:
        await nc.drain()


async def run_sim(rt: Runtime, stop: asyncio.Event) -> None:
    await run_simulator(rt.database_url, rt.nats_url, stop)


async def run_gateway(rt: Runtime, stop: asyncio.Event) -> None:
    settings = rt.settings
    await serve_gateway(
        rt.nats_url,
        host=settings.gateway_host,
        port=settings.gateway_port,
        senders=settings.gateway_senders,
        stop=stop,
        limits=Limits(settings.gateway_sender_rate, settings.gateway_unauthenticated_rate),
    )


def stage_component(workflow_type: str, stage: str) -> Component:
    async def run(rt: Runtime, stop: asyncio.Event) -> None:
        async with AsyncExitStack() as exit_stack:
            nc = await nats.connect(
                rt.nats_url, name=f"interlock-{stage}", inbox_prefix=rt.inbox_prefix
            )
            exit_stack.push_async_callback(nc.drain)
            handlers = stage_handlers(rt, nc, workflow_type)
            nats_broker = broker(rt, stage)
            register(
                nats_broker,
                handlers[stage],
                JobAdmission(
                    JobVerifier(job_public_key(rt.settings)), OpenJobsReader(nc.jetstream())
                ),
                workers=rt.settings.stage_workers,
                inbox_prefix=rt.inbox_prefix,
            )
            await nats_broker.start()
            exit_stack.push_async_callback(nats_broker.stop)
            await stop.wait()

    return run


def components() -> dict[str, Component]:
    """Every component by name: the core services, the extras, and `<type>.<stage>`."""
    found: dict[str, Component] = {
        "projector": run_projector,
        "relay": run_relay,
        "timer": run_timer,
        SIMULATOR: run_sim,
        GATEWAY: run_gateway,
    }
    for workflow_type, stage in all_stages():
        found[f"{workflow_type}.{stage}"] = stage_component(workflow_type, stage)
    return found
