"""The partition host runs every partition of the layout and stops them together: on its
stop, or when one of them ends, when the others drain (they see their stop set) and the host
fails with the first one's error, to be restarted whole."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from interlock.app import run_projector as host
from interlock.app.runtime import Runtime
from interlock.config.settings import Settings

Partition = Callable[[Runtime, asyncio.Event, str], Coroutine[Any, Any, None]]


def _runtime(partitions: int = 3, grace: float = 5.0) -> Runtime:
    settings = Settings(projector_partitions=partitions, shutdown_grace=grace)
    return Runtime(settings, "nats://h:1")


def _layout(monkeypatch: pytest.MonkeyPatch, behave: dict[str, Partition]) -> list[str]:
    """Replace each partition by its behaviour (default: run until stopped); the names of
    those that stopped because they were told to."""
    drained: list[str] = []

    async def until_stopped(rt: Runtime, stop: asyncio.Event, name: str) -> None:
        await stop.wait()
        drained.append(name)

    async def partition(rt: Runtime, stop: asyncio.Event, name: str) -> None:
        await behave.get(name, until_stopped)(rt, stop, name)

    monkeypatch.setattr(host, "run_projector", partition)
    return drained


async def test_every_partition_runs_and_all_stop_on_stop(monkeypatch: pytest.MonkeyPatch) -> None:
    drained = _layout(monkeypatch, {})
    stop = asyncio.Event()
    running = asyncio.create_task(host.run_partition_host(_runtime(), stop))
    stop.set()

    await asyncio.wait_for(running, 5)
    assert sorted(drained) == ["projector.0", "projector.1", "projector.2"]


async def test_one_failing_stops_the_others_and_the_host_fails_with_its_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def fails(rt: Runtime, stop: asyncio.Event, name: str) -> None:
        raise ConnectionError("database gone")

    drained = _layout(monkeypatch, {"projector.1": fails})

    with pytest.raises(ConnectionError, match="database gone"):
        await asyncio.wait_for(host.run_partition_host(_runtime(), asyncio.Event()), 5)
    assert sorted(drained) == ["projector.0", "projector.2"]  # drained, not cancelled


async def test_one_ending_on_its_own_is_a_failure_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def ends(rt: Runtime, stop: asyncio.Event, name: str) -> None:
        return

    drained = _layout(monkeypatch, {"projector.2": ends})

    with pytest.raises(RuntimeError, match=r"projector\.2 stopped on its own"):
        await asyncio.wait_for(host.run_partition_host(_runtime(), asyncio.Event()), 5)
    assert sorted(drained) == ["projector.0", "projector.1"]


async def test_a_partition_that_does_not_drain_is_cancelled_after_the_grace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cancelled = asyncio.Event()

    async def stubborn(rt: Runtime, stop: asyncio.Event, name: str) -> None:
        try:
            await asyncio.Event().wait()  # ignores its stop
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def fails(rt: Runtime, stop: asyncio.Event, name: str) -> None:
        raise ConnectionError("broker gone")

    _layout(monkeypatch, {"projector.0": stubborn, "projector.1": fails})

    with pytest.raises(ConnectionError):
        await asyncio.wait_for(host.run_partition_host(_runtime(grace=0.2), asyncio.Event()), 5)
    assert cancelled.is_set()
