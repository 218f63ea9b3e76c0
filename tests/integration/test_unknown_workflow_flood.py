"""Fair, bounded consumers: signals for workflows that do not exist waited out the unknown-
workflow grace in flight, against the projector consumer's limit of unacknowledged messages
(2,000) that every tenant shares: 2,500 of them from one client and nothing else was delivered
until the grace ran out. Each sender now keeps a bounded share waiting; the rest of its flood is
dead-lettered `unknown_workflow` at once, naming it, and a genuine workflow is decided while
the flood's share still waits."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
from nats.js import JetStreamContext

from interlock.contracts import subjects
from interlock.projector.consumer import Patience
from tests.support.harness import Harness, projector_running
from tests.support.payloads import REQUEST, envelope
from tests.support.polling import eventually
from tests.support.streams import messages_of

pytestmark = pytest.mark.timeout(240)
FLOOD = 2500
GRACE = 150.0
"""Longer than the test: on the old code the genuine START waited all of it."""
SHARE = Patience().unknown_workflow_holds_per_sender


@pytest.fixture
async def patient(nats_url: str, database_url: str) -> AsyncIterator[Harness]:
    """A projector that waits as long as a production one would, and longer."""
    patience = Patience(unknown_workflow_grace=GRACE)
    async with projector_running(nats_url, database_url, patience=patience) as harness:
        yield harness


async def _flood(js: JetStreamContext, count: int) -> None:
    subject = subjects.signal("support", "approvals")
    for start in range(0, count, 250):
        await asyncio.gather(
            *(
                js.publish(
                    subject, envelope("CANCEL_REQUESTED", workflow_id=f"ghost-{n}").to_bytes()
                )
                for n in range(start, min(start + 250, count))
            )
        )


async def _refused_at_once(js: JetStreamContext) -> list[str]:
    letters = await messages_of(js, subjects.STREAM_DLQ)
    details = [(m.headers or {}).get(subjects.HEADER_DLQ_DETAIL, "") for m in letters]
    return [d for d in details if "not kept waiting" in d]


async def test_a_flood_for_unknown_workflows_does_not_hold_up_a_genuine_one(
    patient: Harness, js: JetStreamContext
) -> None:
    await _flood(js, FLOOD)
    workflow_id = f"genuine-{uuid.uuid4()}"
    await patient.publish(envelope("START", workflow_id=workflow_id, payload=REQUEST))

    # Decided well inside the grace, while the flood's share still waits for its workflows.
    await eventually(lambda: patient.find(workflow_id), within=90, what="the genuine START decided")
    # (Decided ahead of the flood's backlog too: another sender's turn comes first.)
    refused = await eventually(
        lambda: _at_least(js, FLOOD - SHARE), within=60, what="the rest refused at once"
    )
    assert all(f"signal:approvals already has {SHARE} messages waiting" in d for d in refused)
    consumer = await js.consumer_info(subjects.STREAM_IN, subjects.CONSUMER_PROJECTOR)
    assert 0 < consumer.num_ack_pending <= SHARE


async def _at_least(js: JetStreamContext, count: int) -> list[str] | None:
    refused = await _refused_at_once(js)
    return refused if len(refused) >= count else None
