"""An in-process projector against the test's real NATS and Postgres."""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from typing import Any

import nats
from faststream.nats import NatsBroker
from nats.aio.client import Client
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.config.access import client_policies, gateway_claims_public_key, job_signing_key
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.envelope import Envelope
from interlock.contracts.partitions import Partition, key_of
from interlock.messaging.streams import provision
from interlock.ops import queries
from interlock.projector.claims import ClaimVerifier
from interlock.projector.consumer import Patience
from interlock.projector.consumer import run as run_projector
from interlock.projector.partitioning import Owner
from interlock.projector.service import Projector
from interlock.projector.signing import JobSigner
from interlock.projector.store.database import database_pool
from interlock.projector.store.postgres import open_store
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY, STAGES

QUICK = Patience(unknown_workflow_grace=1.0)
"""Tests wait a second, not half a minute, for a START that will never come."""


@dataclass
class Harness:
    nc: Client
    engine: AsyncEngine

    async def publish(
        self, event: Envelope, subject: str | None = None, msg_id: str | None = None
    ) -> None:
        subject = subject or keyed_subject(event)
        headers = {subjects.HEADER_MSG_ID: msg_id} if msg_id else None
        await self.nc.jetstream().publish(subject, event.to_bytes(), headers=headers)

    async def find(self, workflow_id: str) -> dict[str, Any] | None:
        return await queries.workflow_view(self.engine, workflow_id)

    async def view(self, workflow_id: str) -> dict[str, Any]:
        found = await self.find(workflow_id)
        assert found is not None, f"no workflow {workflow_id}"
        return found

    async def decided(self, workflow_id: str, event_id: str) -> dict[str, Any]:
        async def probe() -> dict[str, Any] | None:
            return await queries.decision_for(self.engine, workflow_id, event_id)

        return await eventually(probe, what=f"a decision on {event_id}")

    async def at_state(self, workflow_id: str, state: str) -> dict[str, Any]:
        async def probe() -> dict[str, Any] | None:
            view = await self.find(workflow_id)
            return view if view and view["state"] == state else None

        return await eventually(probe, what=f"{workflow_id} in {state}")

    async def scalar(self, sql: str, **params: Any) -> Any:
        async with self.engine.connect() as conn:
            return (await conn.execute(text(sql), params)).scalar()


def keyed_subject(event: Envelope) -> str:
    """The subject a client sends `event` on, keyed: routed to its partition's stream."""
    key = key_of(event, REGISTRY)
    if event.type == "START":
        return subjects.request(event.workflow_type, "upstream", key)
    return subjects.signal(event.workflow_type, "approvals", key)


async def _stopped(stop: asyncio.Event, task: asyncio.Task[None]) -> None:
    stop.set()
    with suppress(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)


@asynccontextmanager
async def projector_running(
    nats_url: str,
    database_url: str,
    *,
    workers: int = 8,
    projectors: int = 1,
    partitions: int = 1,
    store_url: str | None = None,
    settings: Settings | None = None,
    patience: Patience = QUICK,
) -> AsyncIterator[Harness]:
    """Provisioned streams and `projectors` projector apps for each of `partitions`
    partitions for the duration; they write
    through `store_url` (default `database_url`, which the harness reads through) and admit
    the clients of `settings` (default: the installation's defaults, `upstream` sending
    requests, `approvals` and `operator` signals, for every type and tenant)."""
    logging.getLogger("faststream").setLevel(logging.WARNING)
    async with AsyncExitStack() as stack:
        nc = await nats.connect(nats_url)
        stack.push_async_callback(nc.close)
        await provision(nc.jetstream(), STAGES, partitions=partitions)
        engine = database_pool(database_url, pool_size=workers)
        stack.push_async_callback(engine.dispose)
        stop = asyncio.Event()
        settings = settings or Settings()
        clients, signer = client_policies(settings), JobSigner(job_signing_key(settings))
        claims = ClaimVerifier(gateway_claims_public_key(settings))
        for _, index in itertools.product(range(projectors), range(partitions)):
            broker = NatsBroker(nats_url, log_level=logging.DEBUG)
            await broker.start()
            stack.push_async_callback(broker.stop)
            own_store = await open_store(store_url or database_url, size=workers)
            stack.push_async_callback(own_store.close)
            task = asyncio.create_task(
                run_projector(
                    broker,
                    Projector(
                        own_store,
                        registry=REGISTRY,
                        clients=clients,
                        signer=signer,
                        sender_claims=claims,
                    ),
                    stop,
                    workers=workers,
                    patience=patience,
                    owner=Owner(Partition(index, partitions), REGISTRY),
                )
            )
            stack.push_async_callback(_stopped, stop, task)
        yield Harness(nc, engine)
