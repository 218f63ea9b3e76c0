"""Is a component alive, connected and making progress? For health checks and readiness.

`interlock health NAME` reads the report the component itself writes under the home
(`messaging.progress`): a recent report, a live broker connection on the component's own
client, and recent progress (the relay's and the timer service's last pass, the projector's
last answer to a fetch, a stage consumer with a pull request waiting). A process whose
connection died, or whose loop is stuck, is unhealthy even though it still runs.

Readiness at start-up (`wait_until_ready`) is judged from the broker's side: a consumer-based
component is ready when its durable consumer has a pending pull request. A component with an
HTTP server (the gateway, the console) is ready once its port accepts connections too
(`wait_until_listening`).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import nats
from nats.aio.client import Client
from nats.errors import TimeoutError as NatsTimeout
from nats.js.errors import NotFoundError, ServiceUnavailableError

from interlock.app.embedded._process import port_accepts
from interlock.config import components as table
from interlock.config.access import without_credentials
from interlock.config.components import Readiness
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.partitions import (
    PROJECTOR,
    index_of,
    partition_of_component,
)
from interlock.contracts.partitions import components as projector_components
from interlock.contracts.urls import nats_inbox, nats_servers
from interlock.messaging.partition_streams import streams_of
from interlock.messaging.progress import read_report
from interlock.services.adapters.sim import POLICY_CURRENT


def _hosted() -> list[str]:
    """The stage services the stage host runs, by name."""
    return [f"{t}.{s}" for t, s in installed().registry.stages()]


def _readiness(component: str) -> Readiness:
    """How its row says `component`'s readiness is judged (a name no row has: it is up)."""
    row = table.find(component)
    return "connected" if row is None else row.ready


def _consumers_of(component: str) -> list[tuple[str, str]]:
    """The durable consumers `component` fetches from, as its row's readiness names them."""
    row = table.find(component)
    if row is None:
        return []
    if row.ready == "hosted":
        return [c for name in _hosted() for c in _consumers_of(name)]
    if row.ready == "consumers" and row.stage is not None:
        return [(subjects.STREAM_JOBS, subjects.stage_consumer(*row.stage))]
    return []


STALLED_AFTER_S = 30.0
"""No progress for this long makes a component unhealthy (each reports progress every few
seconds while it works or waits)."""


def healthy(
    home: Path, component: str, stalled_after: float = STALLED_AFTER_S, *, partitions: int = 1
) -> tuple[bool, str]:
    """(healthy, a one-line explanation), from the component's own report under `home`; the
    stage host is healthy when every stage it runs is, the partition host when each of the
    `partitions` is (each reports under its own name)."""
    readiness = _readiness(component)
    if readiness in ("hosted", "partitions"):
        hosted = _hosted() if readiness == "hosted" else projector_components(partitions)
        verdicts = [healthy(home, name, stalled_after) for name in hosted]
        failing = [why for ok, why in verdicts if not ok]
        if failing:
            return False, f"{component}: {failing[0]}"
        what = "stage services" if readiness == "hosted" else "projector partitions"
        return True, f"{component}: {len(verdicts)} {what} healthy"
    report = read_report(home, component)
    if report is None:
        return False, f"{component}: no health report under {home} (is it running here?)"
    ok, why = report.verdict(time.time(), stalled_after=stalled_after)
    return ok, f"{component} (pid {report.pid}): {why}"


async def attached(component: str, nats_url: str, *, partitions: int = 1) -> tuple[bool, str]:
    """(attached, a one-line explanation), asked of the broker; `partitions`: the layout's
    (for the partition host)."""
    try:
        nc = await nats.connect(
            nats_servers(nats_url),
            connect_timeout=2,
            max_reconnect_attempts=0,
            inbox_prefix=nats_inbox(nats_url),
        )
    except Exception as exc:
        return False, f"broker unreachable: {type(exc).__name__}"
    try:
        return await _attached_on(nc, component, partitions)
    finally:
        await nc.close()


async def _attached_on(nc: Client, component: str, partitions: int = 1) -> tuple[bool, str]:
    if _readiness(component) == "partition":
        return await _projector_attached(nc, component)
    if _readiness(component) == "partitions":  # every partition of the layout, fetching
        for name in projector_components(partitions):
            attached, why = await _projector_attached(nc, name)
            if not attached:
                return False, f"{component}: {why}"
        return True, f"{component}: {partitions} partition(s) fetching"
    targets = _consumers_of(component)
    if not targets:
        return True, f"{component}: broker reachable"
    waiting = 0
    for target in targets:
        try:
            info = await nc.jetstream().consumer_info(*target)
        except NotFoundError:
            return False, f"{component}: consumer {target[1]} does not exist (run migrate)"
        except (ServiceUnavailableError, NatsTimeout):
            # A cluster's JetStream answers so, or not at all, while it elects a leader.
            return False, f"{component}: JetStream did not answer for {target[1]} (try again)"
        if not info.num_waiting:
            return False, f"{component}: nobody is fetching from {target[1]}"
        waiting += info.num_waiting
    return True, f"{component}: {waiting} pull request(s) waiting"


async def _projector_attached(nc: Client, component: str) -> tuple[bool, str]:
    """A projector partition is attached when its consumer (of whatever partition count the
    stack is provisioned for) has a pull request waiting; `projector`: any projector's."""
    own = f"projector-p{index_of(component)}-of-"
    try:
        every = await nc.jetstream().consumers_info(subjects.STREAM_IN)
    except NotFoundError:
        every = []
    except (ServiceUnavailableError, NatsTimeout):
        # A cluster's JetStream answers so, or not at all, while it elects a leader.
        return False, f"{component}: JetStream did not answer (try again)"
    found = [
        info
        for info in every
        if subjects.is_projector_consumer(info.name)
        and (component == PROJECTOR or info.name.startswith(own))
    ]
    if not found:
        return False, f"{component}: no consumer of it exists (run migrate)"
    layout = subjects.partition_layout(found[0].name)
    if component != PROJECTOR and layout is not None and layout[1] > 1:
        # A partition of several also reads its own stream: both must be fetched from.
        stream = subjects.partition_stream(layout[0])
        try:
            own_stream = await nc.jetstream().consumer_info(stream, found[0].name)
        except NotFoundError:
            return False, f"{component}: {stream} has no consumer {found[0].name} (run migrate)"
        if not own_stream.num_waiting:
            return False, f"{component}: nobody is fetching from {stream}"
    waiting = sum(info.num_waiting or 0 for info in found)
    if waiting:
        return True, f"{component}: {waiting} pull request(s) waiting"
    return False, f"{component}: nobody is fetching from {', '.join(i.name for i in found)}"


async def accepts_anonymous(nats_url: str) -> bool:
    """Whether the server behind `nats_url` lets a client in without credentials. An
    unreachable server answers False: the caller's own connection reports that better."""
    try:
        nc = await nats.connect(
            nats_servers(without_credentials(nats_url)),
            connect_timeout=2,
            max_reconnect_attempts=0,
            allow_reconnect=False,
            error_cb=_ignore,
        )
    except Exception:
        return False
    await nc.close()
    return True


async def _ignore(_error: Exception) -> None:
    """The refusal is the answer; nats-py would log it as an error."""


async def wait_until_ready(
    nats_url: str, components: list[str], within: float = 90.0, *, partitions: int = 1
) -> None:
    """Return once every consumer-based component is fetching and the simulator answers;
    raise TimeoutError naming the laggards otherwise. `partitions`: the projector's."""
    deadline = asyncio.get_running_loop().time() + within
    pending = list(components)
    nc = await nats.connect(nats_servers(nats_url))
    try:
        while pending:
            checks = await asyncio.gather(*(_ready(nc, name, partitions) for name in pending))
            pending = [name for name, ok in zip(pending, checks, strict=True) if not ok]
            if pending and asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"not ready after {within}s: {', '.join(pending)}")
            if pending:
                await asyncio.sleep(0.1)
    finally:
        await nc.close()


async def _ready(nc: Client, component: str, partitions: int) -> bool:
    readiness = _readiness(component)
    if readiness == "answers":
        return await _sim_answers(nc)
    if readiness == "partitions":
        hosted = projector_components(partitions)
        return all(await asyncio.gather(*(_ready(nc, name, partitions) for name in hosted)))
    try:
        if readiness == "partition":  # fetching from every stream it reads
            partition = partition_of_component(component, partitions)
            for stream in streams_of(partition.index, partitions):
                info = await nc.jetstream().consumer_info(stream, partition.consumer)
                if not info.num_waiting:
                    return False
            return True
        healthy, _ = await _attached_on(nc, component)
    except (NotFoundError, NatsTimeout):  # not provisioned yet, or a slow answer
        return False
    return healthy


async def _sim_answers(nc: Client) -> bool:
    try:
        await nc.request(POLICY_CURRENT, b'{"category": "billing"}', timeout=1.0)
    except Exception:
        return False
    return True


async def wait_until_listening(
    settings: Settings, components: list[str], within: float = 90.0
) -> None:
    """Return once every one of `components` with an HTTP server (its row's `listens`)
    accepts connections on the port `settings` give it; TimeoutError naming the others."""
    addresses = {}
    for name in components:
        row = table.find(name)
        if row is not None and row.listens is not None:
            host, port = (getattr(settings, field) for field in row.listens)
            addresses[name] = ("127.0.0.1" if host in ("0.0.0.0", "") else host, port)
    deadline = asyncio.get_running_loop().time() + within
    while addresses:
        for name, address in list(addresses.items()):
            if await asyncio.to_thread(port_accepts, *address):
                del addresses[name]
        if addresses and asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"not listening after {within}s: {', '.join(addresses)}")
        if addresses:
            await asyncio.sleep(0.1)
