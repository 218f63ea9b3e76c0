"""Bringing a stack to life: schema and streams, and the supervised component processes.
What a running component is given is `interlock.app.runtime`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Mapping
from contextlib import asynccontextmanager

import nats

from interlock.app.childenv import child_environment
from interlock.app.composition import with_partitions
from interlock.app.health import wait_until_listening, wait_until_ready
from interlock.app.supervisor import Supervisor
from interlock.config import access, components
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.errors import ConfigurationError
from interlock.contracts.urls import nats_servers
from interlock.messaging.streams import provision
from interlock.projector.store.migrate import upgrade_async
from interlock.projector.store.roles import provision_roles


async def prepare(
    nats_url: str,
    database_url: str,
    roles: Mapping[str, str] | None = None,
    *,
    partitions: int = 1,
    repartition: bool = False,
    replicas: int = 1,
) -> None:
    """Apply migrations, create or update the components' database `roles` (name ->
    password) and provision streams for `partitions` projector partitions (`repartition`:
    rebuilding the inbound stream if it must be and may be) at `replicas` copies;
    idempotent, safe from several    processes. Needs the administrators' URLs."""
    await upgrade_async(database_url)
    if roles is not None:
        await provision_roles(database_url, roles, components.database_access())
    nc = await nats.connect(nats_servers(nats_url), name="interlock-prepare")
    try:
        await provision(
            nc.jetstream(),
            installed().registry.stages(),
            partitions=partitions,
            repartition=repartition,
            replicas=replicas,
        )
    finally:
        await nc.drain()


@asynccontextmanager
async def supervised(
    settings: Settings,
    nats_url: str,
    database_url: str,
    names: list[str],
    stop: asyncio.Event | None = None,
) -> AsyncIterator[Supervisor]:
    """Run the named components as child processes for the duration, each with its own
    credentials and settings only (`nats_url` and `database_url`: the administrators');
    `projector` stands for every partition of a partitioned projector. Enters once every
    component is ready, or as soon as `stop` is set (the caller then checks it); a component
    that refuses to start (exit 2) or is not ready in time is a `ConfigurationError` naming
    it and its last words."""
    partitions = settings.projector_partitions
    names = with_partitions(names, partitions)
    await prepare(
        nats_url,
        database_url,
        access.component_roles(settings),
        partitions=partitions,
        replicas=settings.stream_replicas,
    )
    envs = environments(settings, nats_url, database_url, names)
    supervisor = Supervisor(envs, settings.home / "logs", started_up=False)
    await supervisor.start()
    try:
        await _until_ready(supervisor, _ready(settings, nats_url, names), stop)
        supervisor.started_up = True
        yield supervisor
    finally:
        # A child still running after the shutdown grace is killed: stopping (Ctrl-C)
        # never waits longer than that, whatever the children do.
        await supervisor.stop(settings.shutdown_grace)


def environments(
    settings: Settings, nats_url: str, database_url: str, names: list[str]
) -> dict[str, dict[str, str]]:
    """Each named component's whole environment, as the supervisor starts it: its URLs carry
    its own row's NATS identity and database role (none for a row without database access)."""
    secrets = access.secrets_of(settings)
    server = access.without_credentials(nats_url)
    envs = {}
    for name in names:
        role = access.database_role(name)
        envs[name] = child_environment(
            settings,
            name,
            access.nats_url_as(server, access.nats_identity(name), secrets),
            None if role is None else access.database_url_as(database_url, role, secrets),
        )
    return envs


async def _ready(settings: Settings, nats_url: str, names: list[str]) -> None:
    """Every component attached to the broker, and every HTTP server accepting connections."""
    await asyncio.gather(
        wait_until_ready(nats_url, names, partitions=settings.projector_partitions),
        wait_until_listening(settings, names),
    )


async def _until_ready(
    supervisor: Supervisor, ready: Awaitable[None], stop: asyncio.Event | None
) -> None:
    """Await `ready` unless `stop` is set first; stop early, naming the component, when one
    refuses to start: restarting it would only repeat its refusal until the deadline."""
    waiting = asyncio.ensure_future(ready)
    try:
        while not waiting.done():
            if stop is not None and stop.is_set():
                return
            refused = supervisor.refused()
            if refused is not None:
                words = refused.last_words.removeprefix("error: ") or refused.last_exit
                raise ConfigurationError(f"{refused.name} cannot start: {words}")
            await asyncio.wait({waiting}, timeout=0.2)
        try:
            waiting.result()
        except TimeoutError as exc:
            raise ConfigurationError(f"{exc}{_last_exits(supervisor)}") from None
    finally:
        waiting.cancel()


def _last_exits(supervisor: Supervisor) -> str:
    """Each restarted component's last exit and last words, on the same line."""
    exits = [
        f"{c.name}: {c.last_exit}" + (f": {c.last_words}" if c.last_words else "")
        for c in supervisor.children.values()
        if c.restarts
    ]
    return f" ({'; '.join(exits)})" if exits else ""
