"""Bringing a stack to life: what every component is given, schema and streams, and the
supervised component processes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

import nats

from interlock.app.childenv import child_environment
from interlock.app.health import wait_until_ready
from interlock.app.supervisor import Supervisor
from interlock.config import access, components
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.errors import ConfigurationError
from interlock.contracts.partitions import PROJECTOR
from interlock.contracts.partitions import components as projector_components
from interlock.contracts.urls import nats_inbox, nats_servers
from interlock.messaging.streams import provision
from interlock.projector.store.migrate import upgrade_async
from interlock.projector.store.roles import provision_roles


@dataclass(frozen=True)
class Runtime:
    """What every component needs: settings and its own URLs (credentials included)."""

    settings: Settings
    nats_url: str
    database_url_or_none: str | None = None
    """None for a component without database access (the stages, the gateway)."""

    @property
    def database_url(self) -> str:
        if self.database_url_or_none is None:
            raise RuntimeError("this component has no database access")
        return self.database_url_or_none

    @property
    def inbox_prefix(self) -> str:
        """The only inbox this component's NATS user may subscribe to."""
        return nats_inbox(self.nats_url)


Component = Callable[[Runtime, asyncio.Event], Awaitable[None]]
"""A runnable part of the stack: it runs until its stop event is set."""

CORE = components.placed("core")
"""The runtime's own components (the table's `core` rows). With the stage services of the
installed workflow types they decide, record, publish and time everything; outside systems
are composed in by the root. With several projector partitions, `projector` is `projector.0`
.. `projector.<n-1>`."""


def core(partitions: int = 1) -> list[str]:
    """The core components with `partitions` projector partitions."""
    return with_partitions(components.placed("core"), partitions)


def default_components(
    *workflow_types: str,
    extras: Sequence[str] = (),
    partitions: int = 1,
    stage_host: bool = False,
) -> list[str]:
    """The core components (`partitions` projectors), then `extras`, then the stage services
    of `workflow_types` (default: every installed type), each its own process, or with
    `stage_host` the stage host running every installed type's stages in one."""
    if stage_host:
        return [*core(partitions), *extras, *components.placed("host")]
    return [
        *core(partitions),
        *extras,
        *(
            row.name
            for row in components.rows()
            if row.stage is not None and (not workflow_types or row.stage[0] in workflow_types)
        ),
    ]


def with_partitions(names: list[str], partitions: int) -> list[str]:
    """`names` with `projector` standing for every partition of a partitioned projector."""
    if partitions == 1:
        return names
    expanded: list[str] = []
    for name in names:
        expanded += projector_components(partitions) if name == PROJECTOR else [name]
    return expanded


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
        await _until_ready(
            supervisor, wait_until_ready(nats_url, names, partitions=partitions), stop
        )
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


async def wait_at_most(awaitable: Awaitable[object], seconds: float) -> None:
    """Wait for `awaitable`, `seconds` at most (a stop event between retries)."""
    with suppress(TimeoutError):
        await asyncio.wait_for(awaitable, seconds)
