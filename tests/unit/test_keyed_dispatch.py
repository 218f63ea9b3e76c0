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


async def test_another_tenants_workflow_of_the_same_id_waits_in_a_line_of_its_own() -> None:
    # Workflow ids are unique within a tenant only: a message naming another tenant's
    # workflow of the same id (refused there, or unknown) must not queue behind this one's.
    release = asyncio.Event()
    handled: list[str] = []

    async def handle(parsed: Parsed) -> None:
        event = parsed[1]
        assert not isinstance(event, MalformedMessage)
        if event.tenant_id == "acme":
            await release.wait()
        handled.append(event.event_id)

    dispatcher = KeyedDispatcher(handle, 4)
    try:
        for tenant in ("acme", "globex"):
            body = envelope("CANCEL_REQUESTED", workflow_id="wf-1", tenant_id=tenant,
                            event_id=f"{tenant}-0")  # fmt: skip
            await dispatcher.submit(cast(Any, FakeMsg(body.to_bytes(), sequence=len(handled))))
        await _until(lambda: handled == ["globex-0"])
        release.set()
        await _until(lambda: len(handled) == 2)
    finally:
        release.set()
        await dispatcher.aclose()


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


async def test_a_burst_of_refusals_never_takes_a_workflows_slot() -> None:
    """Messages in no line can only be refused: however many arrive at once, they are decided
    a few at a time in slots of their own, and a workflow's next step does not wait for them."""
    workers = 4
    running, most = 0, 0
    handled: list[str] = []
    release = asyncio.Event()

    async def handle(parsed: Parsed) -> None:
        nonlocal running, most
        event = parsed[1]
        if isinstance(event, MalformedMessage):
            running += 1
            most = max(most, running)
            await release.wait()
            running -= 1
            return
        handled.append(event.workflow_id or "")

    dispatcher = KeyedDispatcher(handle, workers, aside=2)
    try:
        for n in range(20):
            await asyncio.wait_for(dispatcher.submit(cast(Any, FakeMsg(b"{bad", sequence=n))), 1)
        await _until(lambda: running == 2)
        for workflow_id in ("wf-1", "wf-2", "wf-3", "wf-4", "wf-5"):
            await asyncio.wait_for(dispatcher.submit(signal_for(workflow_id)), 1)
        await _until(lambda: len(handled) == 5)
        assert running == most == 2  # the burst waits its turn, two at a time
        release.set()
        await _until(lambda: dispatcher.in_flight == 0)
    finally:
        release.set()
        await dispatcher.aclose()
    assert most == 2


async def test_a_message_back_for_a_workflow_that_did_not_exist_is_decided_aside() -> None:
    """A signal redelivered while it waits for its workflow to be created (mostly: for one
    nobody will create) takes an aside slot, not one of the workflows', and keeps its line."""
    handled: list[str] = []
    release = asyncio.Event()

    async def handle(parsed: Parsed) -> None:
        event = parsed[1]
        assert not isinstance(event, MalformedMessage)
        if event.workflow_id == "busy":
            await release.wait()
        handled.append(event.event_id)

    lone, behind = signal_for("ghost", 0), signal_for("other", 1)
    dispatcher = KeyedDispatcher(handle, 1, aside=1, aside_of=lambda msg: msg in (lone, behind))
    try:
        await dispatcher.submit(signal_for("busy"))  # holds the one workflow slot
        await dispatcher.submit(lone)
        await _until(lambda: handled == ["ghost-0"])  # beside the busy slot
        await dispatcher.submit(signal_for("other", 0))
        await dispatcher.submit(behind)
        for _ in range(20):
            await asyncio.sleep(0)
        assert handled == ["ghost-0"]  # `behind` keeps its place in its line
        release.set()
        await _until(lambda: handled == ["ghost-0", "busy-0", "other-0", "other-1"])
    finally:
        release.set()
        await dispatcher.aclose()


def from_sender(sender: str, workflow_id: str, n: int) -> Any:
    body = envelope("CANCEL_REQUESTED", workflow_id=workflow_id, event_id=f"{sender}-{n}")
    return FakeMsg(body.to_bytes(), f"wf.in.signal.support.{sender}", sequence=n)


async def test_one_senders_backlog_in_a_workflows_line_delays_anothers_message_by_one() -> None:
    handled: list[str] = []
    gate = asyncio.Event()

    async def handle(parsed: Parsed) -> None:
        event = parsed[1]
        assert not isinstance(event, MalformedMessage)
        await gate.wait()
        handled.append(event.event_id)

    dispatcher = KeyedDispatcher(handle, 4)
    try:
        for n in range(100):  # e.g. replays to be refused, all aimed at the one workflow
            await dispatcher.submit(from_sender("mallory", "wf-1", n))
        await dispatcher.submit(from_sender("alice", "wf-1", 0))
        await _until(lambda: dispatcher.in_flight == 101)
        gate.set()
        await _until(lambda: len(handled) == 101)
    finally:
        await dispatcher.aclose()
    assert handled.index("alice-0") <= 1  # the one in hand, then alice's turn: not 100
    assert [e for e in handled if e.startswith("mallory-")] == [f"mallory-{n}" for n in range(100)]


async def test_a_workflows_messages_are_still_decided_one_at_a_time() -> None:
    running: list[str] = []
    overlapped: list[str] = []

    async def handle(parsed: Parsed) -> None:
        event = parsed[1]
        assert not isinstance(event, MalformedMessage)
        if running:
            overlapped.append(event.event_id)
        running.append(event.event_id)
        await asyncio.sleep(0)  # yield: another decision of the workflow could start here
        running.remove(event.event_id)

    dispatcher = KeyedDispatcher(handle, 8)
    try:
        for n in range(30):
            await dispatcher.submit(from_sender(("a", "b", "c")[n % 3], "wf-1", n))
        await _until(lambda: dispatcher.in_flight == 0)
    finally:
        await dispatcher.aclose()
    assert overlapped == []


async def test_messages_waiting_in_a_line_are_kept_alive() -> None:
    gate = asyncio.Event()

    async def handle(parsed: Parsed) -> None:
        await gate.wait()

    dispatcher = KeyedDispatcher(handle, 4, keep_alive=0.02)
    waiting = from_sender("alice", "wf-1", 1)
    try:
        await dispatcher.submit(from_sender("alice", "wf-1", 0))
        await dispatcher.submit(waiting)
        await _until(lambda: waiting.pings >= 2)
    finally:
        gate.set()
        await dispatcher.aclose()


async def _until(condition: Any, within: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)
