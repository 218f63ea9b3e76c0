"""How stage services run: each alone in its process (`interlock service support.classify`),
or all of them in the one process of the stage host (`interlock service stages`).

Either way each stage is its own durable pull consumer on its own job subject, with its own
workers and its own health report under its own name. In the host they share two broker
connections (one FastStream broker for their consumers and results, one client for their
questions to the projector and the outside systems), so the acknowledgements, pull requests and
results of concurrent jobs of different stages leave in the same socket writes; and they
share the process's fate: one failing stops the others, and the supervisor restarts them
all.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextlib import AsyncExitStack

from nats.aio.client import Client

from interlock.app.connections import broker, connect, reporting
from interlock.app.runtime import Component, Runtime, wait_at_most
from interlock.app.wiring import stage_handlers
from interlock.config.access import job_public_key
from interlock.config.components import STAGE_HOST
from interlock.config.plugins import installed
from interlock.contracts import subjects
from interlock.messaging.progress import Progress
from interlock.services.runtime.admission import JobAdmission
from interlock.services.runtime.openjobs import OpenJobsReader
from interlock.services.runtime.signatures import JobVerifier
from interlock.services.runtime.stage import serve

log = logging.getLogger("interlock")


def stage_component(workflow_type: str, stage: str) -> Component:
    """One stage service, alone in its process, connected as the stage's own identity."""

    async def run(rt: Runtime, stop: asyncio.Event) -> None:
        await _serve(rt, stop, stage, [(workflow_type, stage)])

    return run


def stage_service(name: str) -> Component:
    """The stage service `<type>.<stage>` (its row's runner)."""
    return stage_component(*name.split(".", 1))


async def run_stage_host(rt: Runtime, stop: asyncio.Event) -> None:
    """Every installed stage service in this one process, connected as the host's identity."""
    await _serve(rt, stop, STAGE_HOST, installed().registry.stages())


async def _serve(
    rt: Runtime, stop: asyncio.Event, connection: str, stages: Sequence[tuple[str, str]]
) -> None:
    """Run `stages` ((workflow type, stage) pairs) on one broker and one client, named
    `connection`, until `stop`."""
    names = [f"{t}.{s}" for t, s in stages]
    progress = {name: reporting(rt, name, stop) for name in names}
    async with AsyncExitStack() as exit_stack:
        nc = await connect(rt, connection, stop)
        exit_stack.push_async_callback(nc.drain)
        admission = JobAdmission(JobVerifier(job_public_key(rt.settings)), OpenJobsReader(nc))
        nats_broker = broker(rt, connection, stop)
        handlers = {t: stage_handlers(rt, nc, t) for t in dict.fromkeys(t for t, _ in stages)}
        await nats_broker.start()
        exit_stack.push_async_callback(nats_broker.stop)
        for reporter in progress.values():
            reporter.watch(lambda: nats_broker.connection.is_connected)
        # A failing stage ends the group (and so the process): the supervisor restarts it.
        async with asyncio.TaskGroup() as group:
            for name, (workflow_type, stage) in zip(names, stages, strict=True):
                worker = handlers[workflow_type][stage]
                group.create_task(
                    serve(
                        nats_broker,
                        worker,
                        admission,
                        stop,
                        workers=rt.settings.stage_workers,
                        grace=rt.settings.shutdown_grace / 2,
                    )
                )
                group.create_task(_fetching(nc, worker.source, progress[name], stop))


async def _fetching(nc: Client, durable: str, progress: Progress, stop: asyncio.Event) -> None:
    """Until `stop`: note progress whenever the stage's consumer has a pull request waiting
    (asked on the stage's own connection, so a dead connection shows as no progress)."""
    js = nc.jetstream()
    while not stop.is_set():
        try:
            info = await js.consumer_info(subjects.STREAM_JOBS, durable, timeout=2.0)
        except Exception as exc:
            log.debug("consumer %s not reachable: %r", durable, exc)
        else:
            if info.num_waiting or info.num_ack_pending:
                progress.advanced()
        await wait_at_most(stop.wait(), 5.0)
