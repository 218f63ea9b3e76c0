"""The projector's dispatcher: in order within a workflow, concurrent across workflows, and
never blocking the fetch loop: one stuck workflow or a flood of malformed messages delays no
other workflow's message."""

from __future__ import annotations

import asyncio
import zlib
from typing import Any, cast

import pytest

from interlock.contracts.errors import MalformedMessage
from interlock.projector.dispatch import KeyedDispatcher, Parsed
from tests.support.fake_msg import FakeMsg
from tests.support.payloads import envelope

pytestmark = pytest.mark.timeout(20)


def signal_for(workflow_id: str, n: int = 0) -> Any:
    body = envelope("CANCEL_REQUESTED", workflow_id=workflow_id, event_id=f"{workflow_id}-{n}")
    return FakeMsg(body.to_bytes(), sequence=n)


async def test_a_stuck_workflow_never_blocks_the_fetch_loop_or_other_workflows() -> None:
    handled: list[str] = []
    release = asyncio.Event()

    async def handle(parsed: Parsed) -> None:
        event = parsed[1]
        assert not isinstance(event, MalformedMessage)
        if event.workflow_id == "stuck":
            await release.wait()
        handled.append(event.event_id)

    dispatcher = KeyedDispatcher(handle, 4)
    try:
        for n in range(300):  # far more than any queue holds
            await asyncio.wait_for(dispatcher.submit(signal_for("stuck", n)), 1)
        await asyncio.wait_for(dispatcher.submit(signal_for("free")), 1)
        await _until(lambda: "free-0" in handled)
        release.set()
        await _until(lambda: len(handled) == 301)
    finally:
        await dispatcher.aclose()
    stuck = [e for e in handled if e.startswith("stuck-")]
    assert stuck == [f"stuck-{n}" for n in range(300)]  # still in stream order


async def test_malformed_messages_never_block_well_formed_ones() -> None:
    workers = 4
    # A workflow whose key lands where every malformed message used to queue.
    sharing = next(
        f"wf-{i}"
        for i in range(1000)
        if zlib.crc32(f"wf-{i}".encode()) % workers == zlib.crc32(b"") % workers
    )
    handled: list[str] = []
    release = asyncio.Event()

    async def handle(parsed: Parsed) -> None:
        event = parsed[1]
        if isinstance(event, MalformedMessage):
            await release.wait()  # e.g. the dead-letter publish waits out the broker
            return
        handled.append(event.workflow_id or "")

    dispatcher = KeyedDispatcher(handle, workers)
    try:
        for n in range(3):
            await asyncio.wait_for(dispatcher.submit(cast(Any, FakeMsg(b"{bad", sequence=n))), 1)
        await asyncio.wait_for(dispatcher.submit(signal_for(sharing)), 1)
        await _until(lambda: handled == [sharing])
    finally:
        release.set()
        await dispatcher.aclose()


async def _until(condition: Any, within: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)
