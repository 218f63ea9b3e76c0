"""`Client`, the connection an upstream system holds (see `interlock.client`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from collections.abc import AsyncGenerator, Iterable, Mapping
from pathlib import Path

import nats
import nats.errors
from nats.aio.client import Client as Nats
from nats.aio.subscription import Subscription
from pydantic import ValidationError

from interlock.client.errors import InvalidPayload, NotConnected, UnknownWorkflowType
from interlock.client.views import WorkflowView
from interlock.config.plugins import installed
from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.errors import PublishFailed, UnknownDefinition
from interlock.contracts.registry import Registry
from interlock.contracts.urls import nats_inbox, nats_servers, nats_user
from interlock.ops import queries
from interlock.ops.signals import publish, refused_since

UPSTREAM_ACTOR = Actor(id="upstream", role="upstream")


class Client:
    """One external client's connection (see `interlock.client`)."""

    def __init__(
        self,
        nc: Nats,
        sender: str,
        database_url: str | None,
        *,
        workflows: Registry | None = None,
    ) -> None:
        """`workflows`: the definitions requests are checked against (default: the installed
        plugins', loaded on the first `start`)."""
        self._nc = nc
        self._sender = sender
        self._engine = queries.open_reader(database_url) if database_url else None
        self._workflows = workflows
        self._subscriptions: set[Subscription] = set()

    @classmethod
    async def connect(
        cls,
        url: str | None = None,
        *,
        name: str = "upstream",
        home: Path | None = None,
        database_url: str | None = None,
        workflows: Registry | None = None,
    ) -> Client:
        """Connect as the client in `url` (with its credentials), or as client `name` as the
        running `interlock up` under `home` (default INTERLOCK_HOME or ./.interlock) wrote it
        to its endpoints file."""
        if url is None:
            url = _client_url(home or Path(os.environ.get("INTERLOCK_HOME", ".interlock")), name)
        nc = await nats.connect(
            nats_servers(url), inbox_prefix=nats_inbox(url), name="interlock-client"
        )
        return cls(nc, nats_user(url) or name, database_url, workflows=workflows)

    async def start(
        self,
        workflow_type: str,
        payload: Mapping[str, object],
        *,
        tenant_id: str,
        workflow_id: str | None = None,
        actor: Actor = UPSTREAM_ACTOR,
    ) -> str:
        """Publish a request (durably stored once this returns); the workflow's id. Raises
        `UnknownWorkflowType` or `InvalidPayload` (nothing sent), or `PublishFailed`."""
        workflows = self._check_start(workflow_type, payload)
        event = self._envelope(
            "START",
            workflow_type=workflow_type,
            workflow_id=workflow_id,
            tenant_id=tenant_id,
            actor=actor,
            payload=payload,
        )
        await self._publish(event)
        return workflows.workflow_id(event)

    async def signal(
        self,
        workflow_type: str,
        workflow_id: str,
        event_type: str,
        payload: Mapping[str, object],
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
        await self._publish(event)
        return event.event_id

    async def get(self, workflow_id: str, tenant_id: str | None = None) -> WorkflowView | None:
        """The workflow as `interlock show --json` shows it, or None."""
        if self._engine is None:
            raise RuntimeError("reading workflows needs `database_url` in Client.connect")
        view = await queries.workflow_view(self._engine, workflow_id, tenant_id)
        return None if view is None else WorkflowView.model_validate(view)

    async def wait_for_state(
        self, workflow_id: str, states: Iterable[str], *, within: float = 60.0
    ) -> WorkflowView:
        """The workflow once it is in one of `states`; TimeoutError after `within` seconds."""
        wanted = set(states)
        async with asyncio.timeout(within):
            while True:
                view = await self.get(workflow_id)
                if view is not None and view.state in wanted:
                    return view
                await asyncio.sleep(0.1)

    async def tasks(
        self, workflow_type: str, event: str, *, tenant_id: str | None = None
    ) -> AsyncGenerator[dict[str, object], None]:
        """The messages announced on `wf.out.<type>.<event>` (e.g. `approval_requested`), or
        with `tenant_id` on that tenant's `wf.tenant.<tenant>.<type>.<event>` (what a client
        limited to some tenants may read). The iteration ends when it is closed (`aclose`,
        leaving `async for`) or the client is."""
        subject = (
            subjects.out(workflow_type, event)
            if tenant_id is None
            else subjects.tenant_out(tenant_id, workflow_type, event)
        )
        subscription = await self._nc.subscribe(subject)
        self._subscriptions.add(subscription)
        try:
            async for message in subscription.messages:
                yield json.loads(message.data)
        finally:
            self._subscriptions.discard(subscription)
            await _unsubscribed(subscription)

    async def close(self) -> None:
        """End every `tasks` iteration, then drain the connection."""
        for subscription in list(self._subscriptions):
            await _unsubscribed(subscription)
        await self._nc.drain()
        if self._engine is not None:
            await self._engine.dispose()

    def _check_start(self, workflow_type: str, payload: Mapping[str, object]) -> Registry:
        """The definitions the request was checked against (it is for one of them)."""
        if self._workflows is None:
            self._workflows = installed().registry
        try:
            definition = self._workflows.latest(workflow_type)
        except UnknownDefinition:
            raise UnknownWorkflowType(workflow_type, self._workflows.workflow_types()) from None
        spec = definition.event("START")
        if spec is not None and spec.payload is not None:
            try:
                spec.payload.model_validate(payload)
            except ValidationError as exc:
                raise InvalidPayload(workflow_type, exc) from None
        return self._workflows

    async def _publish(self, event: Envelope) -> None:
        before = self._nc.last_error
        try:
            await publish(self._nc.jetstream(), event, self._sender, registry=self._workflows)
        except (nats.errors.Error, TimeoutError) as exc:
            refused = refused_since(self._nc, before)
            if refused is not None:
                raise PublishFailed(
                    f"{event.type} {event.event_id} refused by the broker: {refused}",
                    hint=f"NATS user {self._sender} may not publish that (see the README's "
                    "client permissions); nothing was stored",
                ) from None
            raise PublishFailed(
                f"{event.type} {event.event_id} not acknowledged ({type(exc).__name__})",
                hint="is the broker up, and may this client publish for that type?",
            ) from None

    def _envelope(
        self,
        event_type: str,
        *,
        workflow_type: str,
        workflow_id: str | None,
        tenant_id: str,
        actor: Actor,
        payload: Mapping[str, object],
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


async def _unsubscribed(subscription: Subscription) -> None:
    """Unsubscribe, if the subscription and its connection are still open (closing the
    client, or its draining, ends the subscription anyway)."""
    with contextlib.suppress(nats.errors.Error):
        await subscription.unsubscribe()


def _client_url(home: Path, name: str) -> str:
    """Client `name`'s URL from the endpoints file `interlock up` writes under `home`."""
    path = home / "endpoints.json"
    try:
        return str(json.loads(path.read_text())["clients"][name]["nats_url"])
    except FileNotFoundError:
        raise NotConnected(
            f"no running Interlock under {home} ({path.name} missing)",
            hint="start it with `interlock up`, or pass the client's URL",
        ) from None
    except (KeyError, TypeError, ValueError):
        raise NotConnected(
            f"{path} names no client {name!r}",
            hint="name a configured client (INTERLOCK_CLIENTS), or pass its URL",
        ) from None
