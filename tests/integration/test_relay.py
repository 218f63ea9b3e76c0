"""The outbox relay against real PostgreSQL and real JetStream.

Messages are published under `wf.out.test.<n>` (kept by the WF_OUT stream) and read back in
stream order, so each test sees exactly what a consumer would.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import asyncpg
import pytest
from nats.js import JetStreamContext
from nats.js.api import PubAck, RawStreamMsg
from nats.js.errors import NotFoundError

from contracts import subjects
from relay import (
    DEAD_LETTER_SUBJECT,
    Backoff,
    OutboxRelay,
    OutboxRow,
    PublishDone,
    StoreUnavailable,
)
from relay.store import FETCH

T = TypeVar("T")
Position = tuple[int, int]  # (txid, id)
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
FAST = Backoff(base=0.02, cap=0.2)


# --- fixtures and helpers -------------------------------------------------------------


async def insert(
    conn: asyncpg.Connection, subject: str, body: bytes, headers: dict[str, str] | None = None
) -> Position:
    """Insert one outbox row in `conn`'s current transaction; returns its (txid, id)."""
    row = await conn.fetchrow(
        "INSERT INTO outbox (subject, body, headers) VALUES ($1, $2, $3::jsonb) RETURNING txid, id",
        subject,
        body,
        json.dumps(headers or {}),
    )
    return int(row["txid"]), int(row["id"])


async def stream_messages(
    js: JetStreamContext, stream: str = subjects.STREAM_OUT
) -> list[RawStreamMsg]:
    """Every message the stream holds, in stream (publication) order."""
    try:
        state = (await js.stream_info(stream)).state
    except NotFoundError:
        return []
    if not state.messages:
        return []
    return [await js.get_msg(stream, seq) for seq in range(state.first_seq, state.last_seq + 1)]


def row_id(message: RawStreamMsg) -> int:
    return int((message.headers or {})[subjects.HEADER_MSG_ID].rsplit("-", 1)[1])


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


async def published_ids(js: JetStreamContext) -> list[int]:
    return [row_id(m) for m in await stream_messages(js)]


async def expect_published(js: JetStreamContext, count: int, within: float = 5.0) -> list[int]:
    return await eventually(lambda: published_ids(js), lambda ids: len(ids) >= count, within)


@dataclass
class Recorder:
    """A publish hook that records every attempt and its outcome."""

    outcomes: list[tuple[int, PubAck | BaseException, float]] = field(default_factory=list)

    def __call__(self, row: OutboxRow, headers: dict[str, str]) -> PublishDone:
        return lambda outcome: self.outcomes.append((row.id, outcome, time.monotonic()))

    def acks(self) -> list[tuple[int, PubAck]]:
        return [(i, o) for i, o, _ in self.outcomes if isinstance(o, PubAck)]

    def failures(self, row: int) -> list[float]:
        return [t for i, o, t in self.outcomes if i == row and not isinstance(o, PubAck)]


@asynccontextmanager
async def running(relay: OutboxRelay) -> AsyncIterator[asyncio.Event]:
    """Run `relay` in the background; yields its stop event, stops it on exit."""
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)


async def commit_rows(database_url: str, subject: str, count: int) -> list[Position]:
    conn = await asyncpg.connect(database_url)
    try:
        async with conn.transaction():
            return [await insert(conn, subject, f"m{n}".encode()) for n in range(count)]
    finally:
        await conn.close()


# --- tests ----------------------------------------------------------------------------


async def test_rows_of_a_late_committing_transaction_are_not_skipped(
    database_url: str, js: JetStreamContext
) -> None:
    a = await asyncpg.connect(database_url)
    b = await asyncpg.connect(database_url)
    relay = OutboxRelay(database_url, js)
    try:
        late = a.transaction()
        await late.start()
        a_pos = await insert(a, "wf.out.test.1", b"A", {"traceparent": TRACEPARENT})
        b_pos = await insert(b, "wf.out.test.1", b"B")  # autocommit: B commits first

        # What a naive `id > cursor` reader sees now: only B, whose id is above A's.
        naive = await b.fetch("SELECT id FROM outbox WHERE id > 0 ORDER BY id")
        assert [r["id"] for r in naive] == [b_pos[1]]
        assert a_pos[1] < b_pos[1], "A took the lower id; a naive cursor at B's id skips A"
        assert a_pos[0] < b_pos[0], "but A's txid is lower, so (txid, id) order holds B back"

        assert await relay.publish_pending() == 0
        assert await stream_messages(js) == []
        assert await relay.lag() == 1  # B is after the cursor, held back

        await late.commit()
        assert await relay.publish_pending() == 2
        messages = await stream_messages(js)
        assert [row_id(m) for m in messages] == [a_pos[1], b_pos[1]]
        assert [m.data for m in messages] == [b"A", b"B"]
        # The publish continues the stored trace (same trace id; the relay's own span may
        # become the parent of whatever consumes the message).
        published = (messages[0].headers or {})["traceparent"].split("-")
        assert published[1] == TRACEPARENT.split("-")[1]
        assert await relay.publish_pending() == 0
        assert await relay.lag() == 0
    finally:
        await relay.close()
        await a.close()
        await b.close()


async def test_interleaved_concurrent_writers_publish_every_row_once_in_commit_safe_order(
    database_url: str, js: JetStreamContext
) -> None:
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    committed: dict[int, Position] = {}
    rolled_back: set[int] = set()

    async def writer(n: int) -> None:
        conn = await asyncpg.connect(database_url)
        try:
            for _ in range(8):
                tx = conn.transaction()
                await tx.start()
                rows = []
                for _ in range(rng.randint(1, 6)):
                    rows.append(await insert(conn, f"wf.out.test.{n}", b"x"))
                    await asyncio.sleep(rng.uniform(0, 0.015))
                if rng.random() < 0.2:
                    await tx.rollback()
                    rolled_back.update(i for _, i in rows)
                else:
                    await tx.commit()
                    committed.update({i: (t, i) for t, i in rows})
        finally:
            await conn.close()

    relay = OutboxRelay(database_url, js, batch_size=7, poll_interval=0.2)
    async with running(relay):
        await asyncio.gather(*(writer(n) for n in range(5)))
        await eventually(relay.lag, lambda lag: lag == 0)
    ids = await published_ids(js)

    assert sorted(ids) == sorted(committed), f"seed {seed}"
    assert len(ids) == len(set(ids)), f"duplicates, seed {seed}"
    assert not rolled_back & set(ids)
    order = [committed[i] for i in ids]
    assert order == sorted(order), f"not in (txid, id) order, seed {seed}"


class CrashBeforeCursorUpdate(OutboxRelay):
    async def _advance(self, new: Any) -> None:
        raise RuntimeError("simulated crash after publishing, before moving the cursor")


async def test_crash_between_publish_and_cursor_update_yields_no_duplicate(
    database_url: str, js: JetStreamContext
) -> None:
    rows = await commit_rows(database_url, "wf.out.test.3", 5)
    first, second = Recorder(), Recorder()
    crashing = CrashBeforeCursorUpdate(database_url, js, publish_hook=first)
    with pytest.raises(RuntimeError, match="simulated crash"):
        await crashing.publish_pending()
    await crashing.close()
    assert [i for i, ack in first.acks() if not ack.duplicate] == [i for _, i in rows]
    assert await crashing.lag() == 5

    fresh = OutboxRelay(database_url, js, publish_hook=second)
    try:
        assert await fresh.publish_pending() == 5
    finally:
        await fresh.close()

    assert [(i, ack.duplicate) for i, ack in second.acks()] == [(i, True) for _, i in rows]
    assert await published_ids(js) == [i for _, i in rows]
    assert await fresh.lag() == 0


async def test_two_relays_publish_without_duplicates(
    database_url: str, js: JetStreamContext
) -> None:
    recorders = Recorder(), Recorder()
    relays = [OutboxRelay(database_url, js, poll_interval=0.1, publish_hook=r) for r in recorders]
    async with running(relays[0]) as stop_0, running(relays[1]) as stop_1:
        before = await commit_rows(database_url, "wf.out.test.4", 10)
        assert await expect_published(js, 10) == [i for _, i in before]
        leader = next(n for n, r in enumerate(relays) if r.is_leader)
        follower = 1 - leader
        assert len(recorders[leader].acks()) == 10
        assert recorders[follower].outcomes == []

        await eventually(relays[0].lag, lambda lag: lag == 0)  # the cursor moved too
        (stop_0, stop_1)[leader].set()
        after = await commit_rows(database_url, "wf.out.test.4", 10)
        ids = await expect_published(js, 20)

    assert ids == [i for _, i in before + after]
    assert [i for i, _ in recorders[follower].acks()] == [i for _, i in after]
    assert not any(ack.duplicate for r in recorders for _, ack in r.acks())


async def test_a_standby_takes_over_when_the_leaders_connection_dies(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    first, second = OutboxRelay(database_url, js), OutboxRelay(database_url, js)
    try:
        before = await commit_rows(database_url, "wf.out.test.9", 3)
        assert await first.publish_pending() == 3
        after = await commit_rows(database_url, "wf.out.test.9", 2)
        assert await second.publish_pending() == 0, "the leader holds the lock"

        await db.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks "
            "WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()"
        )
        await eventually(second.publish_pending, lambda moved: moved == 2)
        with pytest.raises(StoreUnavailable):
            await first.publish_pending()
        assert await first.publish_pending() == 0, "reconnected, now in standby"
    finally:
        await first.close()
        await second.close()
    assert await published_ids(js) == [i for _, i in before + after]


async def test_only_published_rows_past_the_retention_are_pruned(
    database_url: str, js: JetStreamContext, db: asyncpg.Connection
) -> None:
    count = "SELECT count(*) FROM outbox"
    keeper = OutboxRelay(database_url, js, retention_seconds=3600)
    pruner = OutboxRelay(database_url, js, name="pruner", retention_seconds=0)
    try:
        await commit_rows(database_url, "wf.out.test.10", 3)
        assert await keeper.publish_pending() == 3
        assert await keeper.prune() == 0, "younger than the retention"

        assert await pruner.publish_pending() == 3  # its own cursor; duplicates dropped
        held = await asyncpg.connect(database_url)
        late = held.transaction()
        await late.start()
        await insert(held, "wf.out.test.10", b"late")
        await commit_rows(database_url, "wf.out.test.10", 1)  # held back behind `late`
        assert await pruner.publish_pending() == 0
        assert await pruner.prune() == 3
        assert await db.fetchval(count) == 1, "the unpublished row stays"
        await late.commit()
        await held.close()
        assert await pruner.publish_pending() == 2
        assert await pruner.prune() == 2
        assert await db.fetchval(count) == 0
    finally:
        await keeper.close()
        await pruner.close()


async def test_notify_wakes_the_relay_quickly(database_url: str, js: JetStreamContext) -> None:
    relay = OutboxRelay(database_url, js, poll_interval=30.0)
    async with running(relay):
        await commit_rows(database_url, "wf.out.test.5", 1)
        await expect_published(js, 1)  # the relay is up; now it idles on LISTEN

        started = time.monotonic()
        await commit_rows(database_url, "wf.out.test.5", 1)
        await expect_published(js, 2, within=2.0)
        assert time.monotonic() - started < 2.0
        await eventually(relay.lag, lambda lag: lag == 0, within=2.0)


async def test_publish_failure_does_not_advance_the_cursor(
    database_url: str, js: JetStreamContext
) -> None:
    conn = await asyncpg.connect(database_url)
    async with conn.transaction():
        _, bad = await insert(conn, "nostream.x", b"nobody stores this")
        await insert(conn, "wf.out.test.6", b"behind the bad row")
    await conn.close()
    recorder = Recorder()
    relay = OutboxRelay(
        database_url,
        js,
        dead_letter_after=100,
        backoff=Backoff(base=0.05, cap=1.0),
        publish_hook=recorder,
    )

    async def failures() -> list[float]:
        return recorder.failures(bad)

    async with running(relay):
        await eventually(failures, lambda f: len(f) >= 5)
        await commit_rows(database_url, "wf.out.test.6", 1)
        await eventually(failures, lambda f: len(f) >= 6)
        assert await relay.lag() == 3
        assert await stream_messages(js) == []

    times = recorder.failures(bad)
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    # Delay n lies in [c/2, c] with c = 0.05 * 2**(n-1): each gap at least the one before.
    assert gaps[0] >= 0.025
    assert all(later >= earlier - 0.01 for earlier, later in itertools.pairwise(gaps))
    assert times[4] - times[0] >= 0.025 + 0.05 + 0.1 + 0.2
    assert {i for i, *_ in recorder.outcomes} == {bad}, "nothing behind the bad row was sent"


async def test_a_permanently_unroutable_row_is_dead_lettered_and_the_relay_moves_on(
    database_url: str, js: JetStreamContext
) -> None:
    conn = await asyncpg.connect(database_url)
    _, bad = await insert(conn, "nostream.x", b"nobody stores this", {"traceparent": TRACEPARENT})
    _, good = await insert(conn, "wf.out.test.7", b"fine")
    await conn.close()
    recorder = Recorder()
    relay = OutboxRelay(database_url, js, dead_letter_after=3, backoff=FAST, publish_hook=recorder)
    async with running(relay):
        assert await expect_published(js, 1) == [good]
        await eventually(relay.lag, lambda lag: lag == 0)

    assert len(recorder.failures(bad)) == 3
    [dead] = await stream_messages(js, subjects.STREAM_DLQ)
    headers = dead.headers or {}
    assert dead.subject == DEAD_LETTER_SUBJECT
    assert dead.data == b"nobody stores this"
    assert headers[subjects.HEADER_DLQ_REASON] == "unroutable"
    assert headers[subjects.HEADER_DLQ_SUBJECT] == "nostream.x"
    assert headers["traceparent"] == TRACEPARENT
    assert row_id(dead) == bad


async def test_fetch_reads_in_commit_order_through_the_index(db: asyncpg.Connection) -> None:
    await db.execute(
        "INSERT INTO outbox (subject, body) "
        "SELECT 'wf.out.test.8', '\\x00'::bytea FROM generate_series(1, 20000)"
    )
    await db.execute("ANALYZE outbox")
    plan = await db.fetchval("EXPLAIN (FORMAT JSON) " + FETCH, 0, 0, 500)
    assert "outbox_commit_order" in plan
    assert '"Sort"' not in plan
