"""The timer service against real PostgreSQL and real JetStream.

Timer rows are inserted with SQL; firings are read back from the WF_IN stream with
`get_msg`, so each test sees exactly what the projector's consumer would.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import asyncpg
import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import PubAck, RawStreamMsg
from nats.js.errors import NotFoundError

from contracts import subjects
from contracts.envelope import parse_envelope
from contracts.ids import derive
from contracts.payloads import TimerFired
from interlock.streams import provision
from projector.service import NotDueYet, Projector
from projector.store.repository import WorkflowStore, open_store
from relay.timers import TimerService
from tests.support.payloads import PAYLOADS, REQUEST, envelope

pytestmark = pytest.mark.timeout(30)

T = TypeVar("T")
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class FakeClock:
    """A clock that only moves when the test says so."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def arm(
    db: asyncpg.Connection,
    timer_id: str,
    fire_at: datetime,
    *,
    status: str = "armed",
    branch: str | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    await db.execute(
        """INSERT INTO timers (id, workflow_id, workflow_type, tenant_id, kind, event_type,
                               fire_at, branch, status, armed_version, headers)
           VALUES ($1, 'wf-' || $1, 'support', 'acme', 'retry', 'RETRY_DUE',
                   $2, $3, $4, 3, $5::jsonb)""",
        timer_id,
        fire_at,
        branch,
        status,
        json.dumps(headers or {}),
    )


async def status_of(db: asyncpg.Connection, timer_id: str) -> str:
    return str(await db.fetchval("SELECT status FROM timers WHERE id = $1", timer_id))


async def stream_messages(js: JetStreamContext) -> list[RawStreamMsg]:
    """Every message WF_IN holds, in stream order."""
    try:
        state = (await js.stream_info(subjects.STREAM_IN)).state
    except NotFoundError:
        return []
    if not state.messages:
        return []
    seqs = range(state.first_seq, state.last_seq + 1)
    return [await js.get_msg(subjects.STREAM_IN, seq) for seq in seqs]


async def eventually(
    probe: Callable[[], Awaitable[T]], done: Callable[[T], bool], within: float = 5.0
) -> T:
    """Poll `probe` until `done(result)`; fail with the last result after `within` seconds."""
    deadline = time.monotonic() + within
    while not done(result := await probe()):
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {within}s; last: {result!r}")
        await asyncio.sleep(0.02)
    return result


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
    event_id = derive("timer-fired", "t-late")
    assert message.subject == "wf.in.timer.support"
    assert message.headers is not None
    # The firing continues the trace of the decision that armed it (same trace id).
    assert message.headers["traceparent"].split("-")[1] == TRACEPARENT.split("-")[1]
    assert message.headers[subjects.HEADER_MSG_ID] == event_id
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
    assert sorted(ids) == sorted(derive("timer-fired", f"t-{n:03}") for n in range(count))
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


async def _waiting_for_notifications(db: asyncpg.Connection) -> bool:
    """Whether the running service has finished its pass and sleeps (its last query was the
    next-due lookup and it is idle)."""
    return bool(
        await db.fetchval(
            """SELECT count(*) > 0 FROM pg_stat_activity
               WHERE datname = current_database() AND application_name = 'interlock-timers'
                 AND state = 'idle' AND query LIKE '%min(fire_at)%'"""
        )
    )


async def test_a_new_near_timer_wakes_the_running_service(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    service = TimerService(database_url, js, poll_interval=30.0)
    stop = asyncio.Event()
    running = asyncio.create_task(service.run(stop))
    try:
        await eventually(lambda: _waiting_for_notifications(db), bool)
        started = time.monotonic()
        await arm(db, "t-near", datetime.now(UTC) + timedelta(seconds=0.3))

        await eventually(lambda: status_of(db, "t-near"), lambda s: s == "published", 2.0)

        assert time.monotonic() - started >= 0.3
        assert len(await stream_messages(js)) == 1
    finally:
        stop.set()
        await asyncio.wait_for(running, 5)


async def test_a_publish_failure_keeps_the_timer_armed_and_backs_off(
    database_url: str,
    nc: Client,
    db: asyncpg.Connection,
    caplog: pytest.LogCaptureFixture,
) -> None:
    js = nc.jetstream()  # no streams yet: every publish finds no responders
    await arm(db, "t-blocked", T0)
    service = TimerService(database_url, js, clock=FakeClock(T0 + timedelta(seconds=1)))
    stop = asyncio.Event()
    caplog.set_level(logging.WARNING, logger="interlock.timers")
    running = asyncio.create_task(service.run(stop))
    try:
        await eventually(lambda: asyncio.sleep(0, len(caplog.records)), lambda n: n >= 4)
        failures = caplog.records[:4]
        assert all("NoStreamResponseError" in r.getMessage() for r in failures)
        # Jittered delays of at least 0.05, 0.1 and 0.2 s separate the first four attempts.
        assert failures[3].created - failures[0].created >= 0.35
        assert await status_of(db, "t-blocked") == "armed"

        await provision(js)
        await eventually(lambda: status_of(db, "t-blocked"), lambda s: s == "published")
    finally:
        stop.set()
        await asyncio.wait_for(running, 5)
    assert len(await stream_messages(js)) == 1


async def test_a_firing_is_accepted_by_the_projector(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    clock = FakeClock()
    store = await open_store(database_url, size=2)
    projector = Projector(store, clock=clock, rand=lambda: 0.5)
    try:
        timer = await _retry_waiting_workflow(projector, store, "wf-timer")
        early = envelope("RETRY_DUE", workflow_id="wf-timer", payload=_fired(timer))
        with pytest.raises(NotDueYet) as premature:
            await projector.handle(early)
        assert premature.value.retry_at == timer["fire_at"]
        refusal = "SELECT reason FROM audit WHERE event_id = $1 AND NOT accepted"
        assert await db.fetchval(refusal, early.event_id) == "guard_rejected"

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
        audited = "SELECT count(*) FROM audit WHERE event_id = $1"
        assert await db.fetchval(audited, fired.event_id) == 1
    finally:
        await store.close()


async def _retry_waiting_workflow(
    projector: Projector, store: WorkflowStore, workflow_id: str
) -> dict[str, Any]:
    """START a support workflow, fail its classify job retryably; returns the retry timer."""
    started = await projector.handle(envelope("START", workflow_id=workflow_id, payload=REQUEST))
    assert started.to_state == "CLASSIFYING"
    stored = await store.load(workflow_id)
    assert stored is not None
    [job_id] = stored.workflow.execution.open_jobs
    failed = await projector.handle(
        envelope(
            "RETRYABLE_ERROR",
            workflow_id=workflow_id,
            payload=PAYLOADS["RETRYABLE_ERROR"],
            causation_id=job_id,
        )
    )
    assert failed.to_state == "RETRY_WAIT"
    stored = await store.load(workflow_id)
    assert stored is not None
    return stored.workflow.execution.timers["retry"].model_dump()


def _fired(timer: dict[str, Any]) -> dict[str, Any]:
    return {"timer_id": timer["id"], "fire_at": timer["fire_at"].isoformat()}
