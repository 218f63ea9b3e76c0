"""Scale-out: the support workflow's stack (two projector partitions, relay, timer, simulator,
its stages) on a real three-node NATS JetStream cluster, every stream at three replicas,
the components given the three seed URLs. The node leading a partition's
own inbound stream is killed with SIGKILL while workflows are in flight: every workflow
completes, with one effect each on the provider's ledger, a gap-free audit and nothing lost,
doubled or dead-lettered; the node, started again, catches up."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import nats
import pytest
from nats.aio.client import Client
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.app.bootstrap import supervised
from interlock.app.composition import default_stack
from interlock.config import access
from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.urls import nats_servers
from interlock.messaging.letters import letters
from interlock.messaging.permissions import ADMIN
from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.simulators import action_count
from interlock.tools.chaos.drive import Driver, Scenario, Workload
from interlock.tools.chaos.invariants import Started, check
from interlock.tools.chaos.run import quiesce
from tests.support.chaos_stack import SWEEP_AFTER_S, chaos_environment
from tests.support.nats_cluster import NatsCluster
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(170)
WORKFLOWS = 60
PARTITIONS = 2
KILLED_STREAM = subjects.partition_stream(0)
APPROVE = Scenario("approve", "support", "approve")
WAITING = ("AWAITING_APPROVAL", "approval_required")
TERMINAL = ("COMPLETED", "FAILED", "REJECTED", "CANCELLED", "NEEDS_ATTENTION")


@dataclass
class Clustered:
    cluster: NatsCluster
    driver: Driver
    admin: Client
    engine: AsyncEngine
    dsn: str
    run: str


@pytest.fixture(scope="module")
async def clustered(
    e2e_settings: Settings,
    session_secrets: Secrets,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Clustered]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INTERLOCK_STREAM_REPLICAS", "3")
        patch.setenv("INTERLOCK_PROJECTOR_PARTITIONS", str(PARTITIONS))
        chaos_environment(patch)
        settings = Settings(
            home=e2e_settings.home,
            secrets_dir=e2e_settings.secrets_dir,
            projector_partitions=PARTITIONS,
        )
        cluster = NatsCluster(tmp_path_factory.mktemp("cluster"), settings, session_secrets)
        seeds = await asyncio.to_thread(cluster.start)
        admin_url = access.nats_url_as(seeds, ADMIN, session_secrets)
        patient: dict[str, Any] = {"max_reconnect_attempts": -1, "reconnect_time_wait": 0.5}
        try:
            stack = default_stack("support", partitions=PARTITIONS)
            async with supervised(settings, admin_url, module_database, stack):
                bus = await Clients.connect(settings, seeds, "cluster", **patient)
                admin = await nats.connect(nats_servers(admin_url), **patient)
                engine = queries.open_reader(module_database, pool_size=4)
                run = uuid.uuid4().hex[:8]
                driver = Driver(
                    bus, admin, engine=engine, database_url=module_database, cases={}, run=run
                )
                try:
                    yield Clustered(cluster, driver, admin, engine, module_database, run)
                finally:
                    await engine.dispose()
                    await bus.close()
                    await admin.close()
        finally:
            await asyncio.to_thread(cluster.stop)


async def _until(
    driver: Driver, w: Workload, holds: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    while True:
        view = await driver.view(w.workflow_id)
        if view is not None and holds(view):
            return view
        await asyncio.sleep(0.2)  # the caller bounds the wait


async def _drive(driver: Driver, w: Workload) -> dict[str, Any]:
    """Request, approve once the workflow waits for it, and return its terminal view."""
    await driver.start(w)
    await driver.answer(w, await _until(driver, w, lambda v: v["state"] in WAITING))
    return await _until(driver, w, lambda v: v["state"] in TERMINAL)


async def _leader(admin: Client, stream: str) -> str:
    """The stream's leader, asked until the cluster answers: right after a node is killed the
    admin's connection may still be moving to another node, or the meta leader electing."""

    async def probe() -> str | None:
        try:
            info = await admin.jetstream().stream_info(stream)
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError):
            return None
        return info.cluster.leader if info.cluster is not None else None

    return await eventually(probe, within=60, every=0.5, what=f"the leader of {stream}")


async def test_workflows_complete_once_each_when_a_partition_streams_leader_is_killed(
    clustered: Clustered,
) -> None:
    c = clustered
    js = c.admin.jetstream()
    streams = [subjects.STREAM_IN, subjects.STREAM_JOBS]
    for stream in streams + [subjects.partition_stream(k) for k in range(PARTITIONS)]:
        assert (await js.stream_info(stream)).config.num_replicas == 3
    work = [Workload(i, APPROVE) for i in range(WORKFLOWS)]
    runs = [asyncio.create_task(_drive(c.driver, w)) for w in work]

    async def a_quarter_done() -> bool:
        return sum(r.done() for r in runs) >= WORKFLOWS // 4

    await eventually(a_quarter_done, within=90, every=0.1, what="a quarter of the workflows")
    killed = await _leader(c.admin, KILLED_STREAM)
    await asyncio.to_thread(c.cluster.kill, killed)
    assert not all(r.done() for r in runs)  # killed mid-run

    _, unfinished = await asyncio.wait(runs, timeout=90)
    for run in unfinished:
        run.cancel()
    assert not unfinished, f"{len(unfinished)} workflows unfinished after {killed} was killed"
    finished = [run.result() for run in runs]

    assert [v["state"] for v in finished] == ["COMPLETED"] * WORKFLOWS
    assert await _leader(c.admin, KILLED_STREAM) != killed
    customers = [f"chaos-{c.run}-{w.number}" for w in work]
    assert [await action_count(c.dsn, customer_id=x) for x in customers] == [1] * WORKFLOWS
    started = [Started(w.workflow_id, "support", x) for w, x in zip(work, customers, strict=True)]
    # The last decisions' outbox rows are marked by the next commit or published by the relay
    # after its delay: the check waits for that, as the chaos command does, then reads.
    await quiesce(c.admin, c.engine, work, limit=45)
    dead = [(d.id, d.body) async for d in letters(js)]
    findings = await check(c.engine, started, dead, sweep_after=SWEEP_AFTER_S)
    assert findings.counts() == dict.fromkeys(findings.counts(), 0), findings.broken()

    # Back, the node catches up with every stream it holds a replica of.
    await asyncio.to_thread(c.cluster.restart, killed)

    async def caught_up() -> bool:
        info = await js.stream_info(KILLED_STREAM)
        assert info.cluster is not None
        peers = {info.cluster.leader: True} | {
            p.name: bool(p.current) for p in info.cluster.replicas or []
        }
        return killed in peers and all(peers.values()) and len(peers) == 3

    await eventually(caught_up, within=30, every=0.2, what=f"{killed} current again")
