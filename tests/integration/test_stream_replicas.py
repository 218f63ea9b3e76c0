"""INTERLOCK_STREAM_REPLICAS on a real three-node cluster: provisioning at 3 scales streams
first made at 1 (what an installation moving from one server to a cluster has), and the
consumers follow their stream. A single server refuses
it with a configuration error naming the setting."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from functools import partial
from pathlib import Path

import nats
import pytest
from nats.aio.client import Client
from nats.js.errors import NoStreamResponseError

from interlock.config import access
from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.urls import nats_servers
from interlock.messaging.errors import ReplicasRefused
from interlock.messaging.permissions import ADMIN
from interlock.messaging.streams import STREAMS, provision
from tests.support.nats_cluster import NatsCluster
from tests.support.polling import eventually
from tests.support.workflows import STAGES

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def cluster(tmp_path: Path, session_secrets: Secrets) -> Iterator[NatsCluster]:
    nodes = NatsCluster(tmp_path, Settings(), session_secrets)
    nodes.start()
    try:
        yield nodes
    finally:
        nodes.stop()


@pytest.fixture
async def admin(cluster: NatsCluster, session_secrets: Secrets) -> AsyncIterator[Client]:
    url = access.nats_url_as(cluster.seeds, ADMIN, session_secrets)
    nc = await nats.connect(nats_servers(url))
    try:
        yield nc
    finally:
        await nc.close()


async def _replicated(admin: Client, stream: str, consumer: str | None = None) -> bool:
    js = admin.jetstream()
    info = await (js.consumer_info(stream, consumer) if consumer else js.stream_info(stream))
    peers = info.cluster.replicas if info.cluster else None
    return len(peers or []) == 2 and all(p.current for p in peers or [])


async def test_streams_made_at_one_replica_are_scaled_to_three(admin: Client) -> None:
    js = admin.jetstream()
    await provision(js, STAGES, replicas=1)
    assert (await js.stream_info(subjects.STREAM_IN)).config.num_replicas == 1

    async def kept() -> bool:
        # A stream just made on a cluster may not take messages for a moment (no leader yet).
        try:
            await js.publish(f"{subjects.IN_PREFIX}.kept", b"{}", headers={"Nats-Msg-Id": "kept"})
        except (NoStreamResponseError, nats.errors.NoRespondersError, nats.errors.TimeoutError):
            return False
        return True

    await eventually(kept, within=30, what="the new stream taking a message")

    await provision(js, STAGES, replicas=3)

    names = [c.name or "" for c in STREAMS]
    for name in names:
        assert (await js.stream_info(name)).config.num_replicas == 3, name
    for name in names:
        await eventually(partial(_replicated, admin, name), within=30, what=f"{name} at R3")
    await eventually(
        lambda: _replicated(admin, subjects.STREAM_IN, subjects.CONSUMER_PROJECTOR),
        within=30,
        what="the projector's consumer following its stream to R3",
    )
    assert (await js.stream_info(subjects.STREAM_IN)).state.messages == 1


async def test_provisioning_is_idempotent_at_three_replicas(admin: Client) -> None:
    js = admin.jetstream()
    await provision(js, STAGES, replicas=3)
    await asyncio.gather(provision(js, STAGES, replicas=3), provision(js, STAGES, replicas=3))

    for config in STREAMS:
        assert (await js.stream_info(config.name or "")).config.num_replicas == 3


async def test_a_single_server_refuses_three_replicas_naming_the_setting(module_nats: str) -> None:
    nc = await nats.connect(module_nats)
    try:
        with pytest.raises(ReplicasRefused, match=r"INTERLOCK_STREAM_REPLICAS=3.*non-clustered"):
            await provision(nc.jetstream(), STAGES, replicas=3)
    finally:
        await nc.close()
