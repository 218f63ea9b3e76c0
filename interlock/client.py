"""A small Python client for the systems around Interlock: start a workflow, send it a
signal, read it, wait for a state, receive the tasks it announces. It builds the envelopes
and publishes on the client's own subjects, so an upstream system writes no wire format.

    client = await Client.connect()                  # `upstream`, from <home>/endpoints.json
    workflow_id = await client.start("<type>", {...}, tenant_id="acme")

Reads (`get`, `wait_for_state`) need the database URL: they are for operators and tests; an
upstream system learns outcomes from the tasks and announcements it subscribes to."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncGenerator, Iterable
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client as Nats

from interlock import queries
from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.ids import workflow_id_for
from interlock.contracts.urls import nats_inbox, nats_servers, nats_user
from interlock.signals import publish

UPSTREAM_ACTOR = Actor(id="upstream", role="upstream")


class Client:
    def __init__(self, nc: Nats, sender: str, database_url: str | None) -> None:
        self._nc = nc
        self._sender = sender
        self._engine = queries.open_reader(database_url) if database_url else None

    @classmethod
    async def connect(
        cls,
        url: str | None = None,
        *,
        name: str = "upstream",
        home: Path | None = None,
        database_url: str | None = None,
    ) -> Client:
        """Connect as the client in `url` (with its credentials), or as client `name` as the
        running `interlock up` under `home` (default INTERLOCK_HOME or ./.interlock) wrote it
        to its endpoints file."""
        if url is None:
            home = home or Path(os.environ.get("INTERLOCK_HOME", ".interlock"))
            endpoints = json.loads((home / "endpoints.json").read_text())
            url = str(endpoints["clients"][name]["nats_url"])
        nc = await nats.connect(
            nats_servers(url), inbox_prefix=nats_inbox(url), name="interlock-client"
        )
        return cls(nc, nats_user(url) or name, database_url)

    async def start(
        self,
        workflow_type: str,
        payload: dict[str, Any],
        *,
        tenant_id: str,
        workflow_id: str | None = None,
        actor: Actor = UPSTREAM_ACTOR,
    ) -> str:
        """Publish a request (durably stored once this returns); the workflow's id."""
        event = self._envelope(
            "START",
            workflow_type=workflow_type,
            workflow_id=workflow_id,
            tenant_id=tenant_id,
            actor=actor,
            payload=payload,
        )
        await publish(self._nc.jetstream(), event, self._sender)
        return workflow_id or workflow_id_for(workflow_type, tenant_id, event.event_id)

    async def signal(
        self,
        workflow_type: str,
        workflow_id: str,
        event_type: str,
        payload: dict[str, Any],
        *,
        tenant_id: str,
        actor: Actor,
        expected_version: int | None = None,
    ) -> str:
        """Publish a signal to the workflow; its event id (the projector decides it)."""
        event = self._envelope(
            event_type,
            workflow_type=workflow_type,
            workflow_id=workflow_id,
            tenant_id=tenant_id,
            actor=actor,
            payload=payload,
        )
        if expected_version is not None:
            event = event.model_copy(update={"expected_version": expected_version})
        await publish(self._nc.jetstream(), event, self._sender)
        return event.event_id

    async def get(self, workflow_id: str, tenant_id: str | None = None) -> dict[str, Any] | None:
        """The workflow as `interlock show --json` shows it, or None."""
        if self._engine is None:
            raise RuntimeError("reading workflows needs `database_url` in Client.connect")
        return await queries.workflow_view(self._engine, workflow_id, tenant_id)

    async def wait_for_state(
        self, workflow_id: str, states: Iterable[str], *, within: float = 60.0
    ) -> dict[str, Any]:
        """The workflow once it is in one of `states`; TimeoutError after `within` seconds."""
        wanted = set(states)
        async with asyncio.timeout(within):
            while True:
                view = await self.get(workflow_id)
                if view is not None and view["state"] in wanted:
                    return view
                await asyncio.sleep(0.1)

    async def tasks(self, workflow_type: str, event: str) -> AsyncGenerator[dict[str, Any], None]:
        """The messages announced on `wf.out.<type>.<event>` (e.g. `approval_requested`)."""
        subscription = await self._nc.subscribe(subjects.out(workflow_type, event))
        try:
            async for message in subscription.messages:
                yield json.loads(message.data)
        finally:
            await subscription.unsubscribe()

    async def close(self) -> None:
        await self._nc.drain()
        if self._engine is not None:
            await self._engine.dispose()

    def _envelope(
        self,
        event_type: str,
        *,
        workflow_type: str,
        workflow_id: str | None,
        tenant_id: str,
        actor: Actor,
        payload: dict[str, Any],
    ) -> Envelope:
        return Envelope(
            event_id=f"{self._sender}-{uuid.uuid4()}",
            type=event_type,
            workflow_type=workflow_type,
            workflow_id=workflow_id,
            tenant_id=tenant_id,
            actor=actor,
            occurred_at=utcnow(),
            payload=payload,
        )
