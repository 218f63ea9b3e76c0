"""A message the projector refuses whatever its workflow's state waits in no workflow's line:
refusals addressed to a workflow never stand between it and its next genuine step, while its
own messages keep their stream order."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any, cast

import pytest

from interlock.contracts.clients import ClientPolicy
from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.ids import result_event_id
from interlock.contracts.subjects import HEADER_MSG_ID
from interlock.projector.dispatch import KeyedDispatcher, Parsed
from interlock.projector.lines import lines_of
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.fake_msg import FakeMsg
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(20)
NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
EVERY = frozenset({"*"})
CLIENTS = {
    "approvals": ClientPolicy(
        publish=frozenset({"signal"}), types=EVERY, tenants=EVERY,
        roles=frozenset({"support_approver", "operator"}),
    ),
    "globex-desk": ClientPolicy(
        publish=frozenset({"signal"}), types=frozenset({"support"}),
        tenants=frozenset({"globex"}), roles=frozenset({"support_approver"}),
    ),
}  # fmt: skip


@pytest.fixture
def line_of() -> Any:
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = Projector(
        store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0, clients=CLIENTS
    )
    return lines_of(projector)


def cancel(sender: str, event_id: str, **fields: Any) -> tuple[Any, Envelope]:
    event = envelope(
        "CANCEL_REQUESTED",
        workflow_id="wf-1",
        event_id=event_id,
        role="operator",
        **fields,
    )
    return cast(Any, FakeMsg(event.to_bytes(), f"wf.in.signal.support.{sender}")), event


def test_a_sender_with_standing_waits_in_its_workflows_line(line_of: Any) -> None:
    assert line_of(*cancel("approvals", "e-1")) == ("acme", "wf-1")


def test_refusals_whatever_the_state_wait_in_no_line(line_of: Any) -> None:
    assert line_of(*cancel("globex-desk", "e-2")) is None  # another tenant's client
    assert line_of(*cancel("nobody", "e-3")) is None  # an unknown client
    assert line_of(*cancel("approvals", "e-4", occurred_at=datetime(1, 1, 1, tzinfo=UTC))) is None
    bad = MalformedMessage("bad_json", "")
    assert line_of(cast(Any, FakeMsg(b"{")), bad) is None


def test_a_message_under_a_reserved_message_id_waits_in_no_line(line_of: Any) -> None:
    msg, event = cancel("approvals", "e-5")
    msg.headers = {HEADER_MSG_ID: result_event_id("job-of-wf-1")}  # a result's, squatted
    assert line_of(msg, event) is None


async def test_a_refusal_does_not_wait_behind_the_workflows_stuck_step(line_of: Any) -> None:
    release = asyncio.Event()
    decided: list[str] = []

    async def handle(parsed: Parsed) -> None:
        event = parsed[1]
        assert isinstance(event, Envelope)
        if event.event_id == "genuine":
            await release.wait()
        decided.append(event.event_id)

    dispatcher = KeyedDispatcher(handle, 4, line_of=line_of)
    try:
        for sender, event_id in (("approvals", "genuine"), ("globex-desk", "foreign")):
            await dispatcher.submit(cancel(sender, event_id)[0])
        await dispatcher.submit(cancel("approvals", "later")[0])
        await _until(lambda: "foreign" in decided)
        assert "later" not in decided  # the workflow's own messages keep their order
        release.set()
        await _until(lambda: decided[-1] == "later")
    finally:
        release.set()
        await dispatcher.aclose()
    assert decided == ["foreign", "genuine", "later"]


async def _until(condition: Any, within: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.005)
