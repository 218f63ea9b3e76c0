"""Kill -9 of projector partitions mid-run, on a stack of two partitions, each in its own
process or both in the partition host's: nothing is lost, no event is accepted twice, each
workflow's transitions stay gap-free, one effect each."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from interlock.app.embedded import EmbeddedNats
from interlock.config import access
from interlock.config.components import PARTITION_HOST
from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.messaging.permissions import ADMIN
from interlock.tools.demo.runner import Run, approve
from tests.conftest import nats_config
from tests.support.chaos_stack import Stack, running_stack
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(180)
PARTITIONS = 2


@pytest.fixture(scope="module", autouse=True)
def _partitioned() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INTERLOCK_PROJECTOR_PARTITIONS", str(PARTITIONS))
        yield


@pytest.fixture(scope="module")
def module_nats(
    _partitioned: None, tmp_path_factory: pytest.TempPathFactory, session_secrets: Secrets
) -> Iterator[str]:
    """A broker of its own: its projector may pull from the partitions' consumers."""
    store = tmp_path_factory.mktemp("nats-partitioned")
    settings = Settings(projector_partitions=PARTITIONS)
    server = EmbeddedNats(store, config=nats_config(settings, session_secrets, store))
    url = server.start()
    try:
        yield access.nats_url_as(url, ADMIN, session_secrets)
    finally:
        server.stop()


@pytest.fixture  # one stack at a time on the broker: each test's is stopped after it
async def partitioned_stack(
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    """Every stage service in its own process, two projector partitions: on its own broker,
    no shared stack of the chaos tier (tests/chaos/conftest.py)."""
    async with running_stack(
        e2e_settings, module_nats, module_database, tmp_path_factory, stage_host=False
    ) as running:
        yield running


@pytest.fixture
async def hosted_stack(
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    """The same two partitions in one process, the partition host, the stages in theirs."""
    async with running_stack(
        e2e_settings,
        module_nats,
        module_database,
        tmp_path_factory,
        stage_host=True,
        projector_host=True,
    ) as running:
        yield running


async def _completed(run: Run) -> dict[str, Any]:
    await approve(run, await asyncio.wait_for(run.next_task(), 60))
    return await asyncio.wait_for(run.wait_state("COMPLETED"), 90)


async def test_killing_partitions_mid_run_loses_nothing(partitioned_stack: Stack) -> None:
    stack = partitioned_stack
    assert {"projector.0", "projector.1"} <= set(stack.supervisor.children)
    runs = [await stack.workflow() for _ in range(8)]
    stack.supervisor.kill("projector.1")  # mid-run: its workflows are being decided
    done = asyncio.gather(*(_completed(run) for run in runs))
    await _killed_when_running(stack, "projector.0")
    await _each_once(stack, runs, await done)
    assert stack.supervisor.children["projector.1"].restarts >= 1
    await _drained(stack)


async def test_killing_the_partition_host_mid_run_loses_nothing(hosted_stack: Stack) -> None:
    stack = hosted_stack
    assert PARTITION_HOST in stack.supervisor.children
    assert not any(name.startswith("projector.") for name in stack.supervisor.children)
    runs = [await stack.workflow() for _ in range(8)]
    stack.supervisor.kill(PARTITION_HOST)  # both partitions at once, mid-run
    done = asyncio.gather(*(_completed(run) for run in runs))

    async def restarted() -> bool:
        child = stack.supervisor.children[PARTITION_HOST]
        return child.restarts >= 1 and child.alive

    await eventually(restarted, what="the partition host restarted")
    stack.supervisor.kill(PARTITION_HOST)  # again, while the workflows go on
    await _each_once(stack, runs, await done)
    assert stack.supervisor.children[PARTITION_HOST].restarts >= 2
    await _drained(stack)


async def _each_once(stack: Stack, runs: list[Run], views: list[dict[str, Any]]) -> None:
    for run, view in zip(runs, views, strict=True):
        accepted = [a["state_version"] for a in view["audit"] if a["accepted"]]
        assert accepted == list(range(1, len(accepted) + 1))
        events = [a["event_id"] for a in view["audit"] if a["accepted"]]
        assert len(events) == len(set(events))  # each event accepted once
        # a request redelivered after a kill is answered as the replay it is, nothing more
        again = [a for a in view["audit"] if not a["accepted"]]
        assert {a["reason"] for a in again} <= {"idempotent_replay"}, again
        assert await stack.effects(run) == 1


async def _drained(stack: Stack) -> None:
    async def drained() -> bool:
        info = await stack.admin.jetstream().stream_info(subjects.STREAM_IN)
        return info.state.messages == 0

    await eventually(drained, what="every partition acknowledged every inbound message")


async def _killed_when_running(stack: Stack, name: str) -> None:
    async def running() -> bool:
        return stack.supervisor.children[name].alive

    await eventually(running, what=f"{name} running")
    stack.supervisor.kill(name)
