"""The timer service: turns due timer rows into timer events on `wf.in.timer.<type>.<key>`
(keyed by the timer's workflow, so its partition's stream holds them).

Guarantees:
- A due, armed timer fires at least once: rows are claimed, published and marked
  `published` in one transaction; a crash before the commit leaves them armed, and they
  are published again under the same event id.
- Firing is deduplicated downstream: the event id, derived from the timer id, is the
  projector's processed-event key; the `Nats-Msg-Id` (stream duplicate window) is that id
  sealed with the row's random `seal` (migration 0017), so no client, which can derive the
  event id from an announcement, can publish under it first and have the firing dropped.
- Two services never publish the same row concurrently (`FOR UPDATE SKIP LOCKED`).
- A cancelled timer never fires: only `armed` rows are claimed, and the projector's
  cancelling UPDATE waits for the claim's row lock; a firing that wins that race names a
  timer the workflow no longer holds, which the engine rejects as `stale_version`.
- A paused workflow's timers fall due but stay armed until it is resumed (the resume
  notifies this service, which then fires them in due order).
- Waiting holds no worker: `run` sleeps until the earliest armed timer or `poll_interval`,
  and a newly armed timer wakes it early (`LISTEN interlock_timers`, migration 0002).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg
import nats.errors
from nats.js import JetStreamContext

from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.errors import StoreUnavailable, TransientError
from interlock.contracts.ids import sealed_message_id, timer_event_id
from interlock.contracts.partitions import routing_key
from interlock.contracts.payloads import TimerFired
from interlock.messaging.backoff import Backoff
from interlock.messaging.crashpoints import crash_point
from interlock.messaging.ordered import Observe, OrderedPublisher, Outgoing, traced
from interlock.messaging.waiting import wait_any
from interlock.relay.clock import Clock, seconds_until
from interlock.relay.errors import TimerPublishFailed
from interlock.relay.paused import not_paused
from interlock.relay.publish import string_headers
from interlock.relay.store import UNAVAILABLE, close_quietly
from interlock.relay.tracing import TRACER

log = logging.getLogger("interlock.timers")

CHANNEL = "interlock_timers"
APPLICATION_NAME = "interlock-timers"
ACTOR = Actor(id="timer-service", role="system")
PUBLISH_TIMEOUT_S = 5.0
MIN_PAUSE_S = 0.05
"""Shortest sleep between passes: rows that are due but locked by another service (or
failing) must not make this one spin."""
BACKOFF = Backoff(base=0.1, cap=2.0)
"""Capped low: after an outage the service is at most a couple of seconds late."""

NOT_PAUSED = not_paused("timers")
"""A timer of a paused workflow (migration 0018) stays armed: it fires once resumed."""
CLAIM_DUE = f"""
SELECT id, workflow_id, workflow_type, tenant_id, event_type, fire_at, branch, headers, seal
FROM timers
WHERE status = 'armed' AND fire_at <= $1 AND {NOT_PAUSED}
ORDER BY fire_at, id
LIMIT $2
FOR UPDATE SKIP LOCKED
"""
MARK_PUBLISHED = """
UPDATE timers SET status = 'published', updated_at = now() WHERE id = ANY($1::text[])
"""
NEXT_DUE = f"SELECT min(fire_at) FROM timers WHERE status = 'armed' AND {NOT_PAUSED}"

_BROKER_ERRORS = (nats.errors.Error, TimeoutError, OSError)


@dataclass(frozen=True, slots=True)
class Firing:
    """One timer's event, ready to publish."""

    timer_id: str
    subject: str
    headers: dict[str, str]
    body: bytes


def firing(row: asyncpg.Record, now: datetime) -> Firing:
    """The event of timer `row` fired at `now`: no `expected_version`, since other events may
    advance the workflow while a timer waits; the engine checks the timer id instead."""
    event_id = timer_event_id(row["id"])
    payload = TimerFired(timer_id=row["id"], fire_at=row["fire_at"], branch=row["branch"])
    envelope = Envelope(
        event_id=event_id,
        type=row["event_type"],
        workflow_type=row["workflow_type"],
        workflow_id=row["workflow_id"],
        tenant_id=row["tenant_id"],
        actor=ACTOR,
        causation_id=row["id"],
        occurred_at=now,
        payload=payload.model_dump(mode="json"),
    )
    headers = string_headers(json.loads(row["headers"]))
    headers[subjects.HEADER_MSG_ID] = sealed_message_id(event_id, row["seal"])
    subject = subjects.timer(
        row["workflow_type"], routing_key(row["tenant_id"], row["workflow_id"])
    )
    return Firing(row["id"], subject, headers, envelope.to_bytes())


@asynccontextmanager
async def _store_errors() -> AsyncIterator[None]:
    try:
        yield
    except UNAVAILABLE as exc:
        raise StoreUnavailable(f"database unavailable: {type(exc).__name__}") from exc


async def _connect(url: str) -> asyncpg.Connection:
    async with _store_errors():
        return await asyncpg.connect(
            url, timeout=10, server_settings={"application_name": APPLICATION_NAME}
        )


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    return min((t for t in (a, b) if t is not None), default=None)


class TimerService:
    def __init__(
        self,
        database_url: str,
        js: JetStreamContext,
        *,
        clock: Clock = utcnow,
        poll_interval: float = 1.0,
        batch_size: int = 200,
        on_pass: Callable[[], None] = lambda: None,
    ) -> None:
        """`database_url`: a plain postgresql:// URL. Nothing connects until a method runs.
        `on_pass` is called after every complete pass (the component's sign of progress)."""
        self._url = database_url
        self._on_pass = on_pass
        self._publisher = OrderedPublisher(js, timeout=PUBLISH_TIMEOUT_S)
        self._clock = clock
        self._poll_interval = poll_interval
        self._batch_size = batch_size
        self._connection: asyncpg.Connection | None = None  # held (and listening) in `run`
        self._lock = asyncio.Lock()
        self._wakeup = asyncio.Event()
        self._notified: datetime | None = None  # earliest fire time a notification named
        self._failures = 0  # consecutive failed passes of `run`, for its backoff

    async def fire_due(self) -> int:
        """Fire every armed timer due by `clock()`, `batch_size` rows per transaction; returns
        how many were published. Raises `TimerPublishFailed` (that batch rolled back, earlier
        batches stay committed) or `StoreUnavailable`."""
        now, fired = self._clock(), 0
        async with self._session() as connection:
            while True:
                count = await self._fire_batch(connection, now)
                fired += count
                if count < self._batch_size:
                    return fired

    async def next_due(self) -> datetime | None:
        """When the earliest armed timer is due (possibly already past); None if none is."""
        async with self._session() as connection, _store_errors():
            due: datetime | None = await connection.fetchval(NEXT_DUE)
        return due

    async def run(self, stop: asyncio.Event) -> None:
        """Fire due timers until `stop` is set. A lost database or a refused publish is logged
        (with its error class) and retried after bounded exponential backoff with jitter;
        any other error is a bug and propagates."""
        while not stop.is_set():
            try:
                await self._serve(stop)
            except TransientError as exc:
                self._failures += 1
                delay = BACKOFF.delay(self._failures)
                cause = type(exc.__cause__ or exc).__name__
                log.warning("timer firing failed: %s (%s); retry in %.2fs", exc.code, cause, delay)
                await wait_any([stop], delay)

    async def _serve(self, stop: asyncio.Event) -> None:
        """Fire what is due, then sleep until the earliest known due time. A notification
        names the earliest new timer, so arming one costs no query; a full pass (fire, then
        ask for the next due time) happens when something is due, and every poll interval."""
        async with self._listening():
            due: datetime | None = None
            passed_at = float("-inf")
            loop = asyncio.get_running_loop()
            while not stop.is_set():
                polled = loop.time() - passed_at >= self._poll_interval
                if polled or (due is not None and seconds_until(due, self._clock) <= 0):
                    self._wakeup.clear()  # before the pass: a timer armed during it wakes us
                    self._notified = None
                    await self.fire_due()
                    due, passed_at, self._failures = await self.next_due(), loop.time(), 0
                    self._on_pass()
                await wait_any([stop, self._wakeup], self._pause(due))
                self._wakeup.clear()
                due = _earliest(due, self._notified)
                self._notified = None

    def _pause(self, due: datetime | None) -> float:
        if due is None:
            return self._poll_interval
        return min(self._poll_interval, max(MIN_PAUSE_S, seconds_until(due, self._clock)))

    def _on_notify(self, _conn: object, _pid: int, _channel: str, payload: str) -> None:
        try:
            announced = datetime.fromtimestamp(float(payload), UTC)
        except ValueError:
            announced = self._clock()  # an old trigger without a time: do a pass now
        self._notified = _earliest(self._notified, announced)
        self._wakeup.set()

    @asynccontextmanager
    async def _listening(self) -> AsyncIterator[None]:
        connection = await _connect(self._url)
        try:
            async with _store_errors():
                await connection.add_listener(CHANNEL, self._on_notify)
            self._connection = connection
            yield
        finally:
            self._connection = None
            await close_quietly(connection)

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[asyncpg.Connection]:
        """The connection `run` holds, else a short-lived one; one user at a time."""
        async with self._lock:
            if self._connection is not None:
                yield self._connection
                return
            connection = await _connect(self._url)
            try:
                yield connection
            finally:
                await close_quietly(connection)

    async def _fire_batch(self, connection: asyncpg.Connection, now: datetime) -> int:
        async with _store_errors(), connection.transaction():
            rows = await connection.fetch(CLAIM_DUE, now, self._batch_size)
            firings = [firing(row, now) for row in rows]
            await self._publish(firings)
            if firings:
                crash_point("timer.after_publish")
                await connection.execute(MARK_PUBLISHED, [f.timer_id for f in firings])
        return len(firings)

    async def _publish(self, firings: Sequence[Firing]) -> None:
        """Publish `firings` one after the other (`messaging.ordered`), so that none is
        stored ahead of an earlier one that failed; raises `TimerPublishFailed` for the first
        the broker did not take (the batch is then rolled back and fired again, under the
        same ids, which the stream deduplicates)."""
        for f in firings:
            sent = await self._publisher.publish(
                [Outgoing(f.subject, f.headers, f.body)], _traced(f.timer_id)
            )
            if sent.error is not None:
                if isinstance(sent.error, _BROKER_ERRORS):
                    raise TimerPublishFailed(
                        f"timer {f.timer_id} not published: {type(sent.error).__name__}",
                        hint="check that NATS is reachable and the WF_IN stream exists",
                    ) from sent.error
                raise sent.error
            if sent.acks[0].duplicate:
                log.info("timer %s was already published; the stream kept one copy", f.timer_id)


def _traced(timer_id: str) -> Observe:
    """A firing's publish span, continuing the trace of the decision that armed its timer."""
    return lambda _, m: traced(TRACER, m.subject, m.headers, {"interlock.timer_id": timer_id})
