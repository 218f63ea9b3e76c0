"""The timer service firing, against real PostgreSQL and real JetStream: never early, late
timers once with their payload and trace, a repeated firing as one message, many timers over
two services once each, cancelled timers never — and the projector accepting a firing only
when it is due.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import asyncpg
import pytest
from nats.js import JetStreamContext
from nats.js.api import PubAck

from interlock.contracts import subjects
from interlock.contracts.envelope import parse_envelope
from interlock.contracts.ids import timer_event_id
from interlock.contracts.partitions import routing_key
from interlock.contracts.payloads import TimerFired
from interlock.projector.errors import NotDueYet
from interlock.projector.service import Projector
from interlock.projector.store.postgres import open_store
from interlock.relay.timers import TimerService
from tests.support.payloads import envelope
from tests.support.relay_rows import TRACEPARENT
from tests.support.routing import mapped
from tests.support.timer_rows import (
    T0,
    FakeClock,
    arm,
    firing_payload,
    retry_waiting_workflow,
    status_of,
    stream_messages,
)
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(30)


def record_acks(js: JetStreamContext) -> list[PubAck]:
    """Spy on `js.publish`: every ack it returns is appended to the returned list."""
    acks: list[PubAck] = []
    publish = js.publish

    async def spy(*args: Any, **kwargs: Any) -> PubAck:
        ack = await publish(*args, **kwargs)
        acks.append(ack)
        return ack

    js.publish = spy  # type: ignore[method-assign]
    return acks


async def test_a_timer_does_not_fire_early(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    clock = FakeClock()
    await arm(db, "t-early", T0 + timedelta(seconds=30))
    service = TimerService(database_url, js, clock=clock)

    clock.now = T0 + timedelta(seconds=30) - timedelta(microseconds=1)
    assert await service.fire_due() == 0
    assert await status_of(db, "t-early") == "armed"
    assert await stream_messages(js) == []
    assert await service.next_due() == T0 + timedelta(seconds=30)

    clock.now = T0 + timedelta(seconds=30)
    assert await service.fire_due() == 1
    assert await service.next_due() is None


async def test_a_late_timer_fires_once_with_its_payload_and_trace_headers(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    clock = FakeClock(T0 + timedelta(hours=1))
    await arm(db, "t-late", T0, branch="account", headers={"traceparent": TRACEPARENT})
    service = TimerService(database_url, js, clock=clock)

    assert await service.fire_due() == 1
    assert await service.fire_due() == 0

    [message] = await stream_messages(js)
    event_id = timer_event_id("t-late")
    assert message.subject == mapped(subjects.timer("support", routing_key("acme", "wf-t-late")))
    assert message.headers is not None
    # The firing continues the trace of the decision that armed it (same trace id).
    assert message.headers["traceparent"].split("-")[1] == TRACEPARENT.split("-")[1]
    # Sealed, so no client that can derive the event id can spend the message id first.
    seal = await db.fetchval("SELECT seal FROM timers WHERE id = 't-late'")
    assert message.headers[subjects.HEADER_MSG_ID] == f"{event_id}.{seal}"
    event = parse_envelope(message.data or b"")
    assert (event.event_id, event.type, event.workflow_type) == (event_id, "RETRY_DUE", "support")
    assert (event.workflow_id, event.tenant_id) == ("wf-t-late", "acme")
    assert event.causation_id == "t-late"
    assert (event.actor.id, event.actor.role) == ("timer-service", "system")
    assert event.occurred_at == clock.now
    assert event.expected_version is None
    assert set(event.payload) == {"timer_id", "fire_at", "branch"}
    fired = TimerFired.model_validate(event.payload)
    assert fired == TimerFired(timer_id="t-late", fire_at=T0, branch="account")
    assert await status_of(db, "t-late") == "published"


async def test_firing_twice_publishes_one_message(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    acks = record_acks(js)
    service = TimerService(database_url, js, clock=FakeClock(T0 + timedelta(seconds=1)))
    await arm(db, "t-twice", T0)

    assert await service.fire_due() == 1
    # A crash between publish and commit leaves the row armed.
    await db.execute("UPDATE timers SET status = 'armed' WHERE id = 't-twice'")
    assert await service.fire_due() == 1

    assert [ack.duplicate for ack in acks] == [None, True]
    assert len(await stream_messages(js)) == 1
    assert await status_of(db, "t-twice") == "published"


async def test_two_services_fire_each_timer_once(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    count = 300
    await db.executemany(
        """INSERT INTO timers (id, workflow_id, workflow_type, tenant_id, kind, event_type,
                               fire_at, status, armed_version)
           VALUES ($1, 'wf', 'support', 'acme', 'retry', 'RETRY_DUE', $2, 'armed', 1)""",
        [(f"t-{n:03}", T0 + timedelta(milliseconds=n)) for n in range(count)],
    )
    acks = record_acks(js)
    clock = FakeClock(T0 + timedelta(minutes=1))
    services = [TimerService(database_url, js, clock=clock, batch_size=10) for _ in range(2)]

    fired = await asyncio.gather(*(s.fire_due() for s in services))

    assert sum(fired) == count, fired  # each row claimed by exactly one service
    assert not [ack for ack in acks if ack.duplicate]
    ids = [(m.headers or {})[subjects.HEADER_MSG_ID] for m in await stream_messages(js)]
    event_ids = sorted(i.rpartition(".")[0] for i in ids)
    assert event_ids == sorted(timer_event_id(f"t-{n:03}") for n in range(count))
    assert await db.fetchval("SELECT count(*) FROM timers WHERE status = 'armed'") == 0


async def test_a_cancelled_timer_never_fires(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    await arm(db, "t-cancelled", T0, status="cancelled")
    await arm(db, "t-armed", T0 + timedelta(seconds=1))
    service = TimerService(database_url, js, clock=FakeClock(T0 + timedelta(days=1)))

    assert await service.fire_due() == 1

    [message] = await stream_messages(js)
    assert parse_envelope(message.data or b"").payload["timer_id"] == "t-armed"
    assert await status_of(db, "t-cancelled") == "cancelled"


async def test_a_firing_is_accepted_by_the_projector(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    clock = FakeClock()
    store = await open_store(database_url, size=2)
    projector = Projector(store, registry=REGISTRY, clock=clock, rand=lambda: 0.5)
    try:
        timer = await retry_waiting_workflow(projector, store, "wf-timer")
        early = envelope("RETRY_DUE", workflow_id="wf-timer", payload=firing_payload(timer))
        with pytest.raises(NotDueYet) as premature:
            await projector.handle(early)
        assert premature.value.retry_at == timer["fire_at"]
        # Waited for, not refused: a premature firing leaves no audit row.
        audited = "SELECT count(*) FROM audit WHERE event_id = $1"
        assert await db.fetchval(audited, early.event_id) == 0

        clock.now = timer["fire_at"] + timedelta(seconds=1)
        assert await TimerService(database_url, js, clock=clock).fire_due() == 1
        [message] = await stream_messages(js)
        fired = parse_envelope(message.data or b"")

        outcome = await projector.handle(fired)
        assert (outcome.accepted, outcome.from_state, outcome.to_state) == (
            True,
            "RETRY_WAIT",
            "CLASSIFYING",
        )
        again = await projector.handle(fired)
        assert (again.accepted, again.reason) == (False, "duplicate")
        assert await db.fetchval(audited, fired.event_id) == 1
    finally:
        await store.close()
