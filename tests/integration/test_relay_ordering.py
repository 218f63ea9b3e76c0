"""The outbox relay's ordering and crash safety, against real PostgreSQL and real JetStream.

Rows reach the stream in commit-safe (txid, id) order, even when transactions commit out of
id order or interleave; a crash after publishing and a failing publish neither duplicate nor
skip a row. Messages are read back in stream order, as a consumer would see them.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from typing import Any

import asyncpg
import pytest
from nats.js import JetStreamContext

from interlock.relay import Backoff, OutboxRelay
from interlock.relay.store import FETCH
from tests.support.relay_rows import (
    TRACEPARENT,
    Position,
    Recorder,
    commit_rows,
    insert,
    published_ids,
    row_id,
    running,
    stream_messages,
)
from tests.support.waiting import until


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
        await until(relay.lag, lambda lag: lag == 0)
    ids = await published_ids(js)

    assert sorted(ids) == sorted(committed), f"seed {seed}"
    assert len(ids) == len(set(ids)), f"duplicates, seed {seed}"
    assert not rolled_back & set(ids)
    order = [committed[i] for i in ids]
    assert order == sorted(order), f"not in (txid, id) order, seed {seed}"


class CrashBeforeCursorUpdate(OutboxRelay):
    async def _advance(self, new: Any, published: Any) -> None:
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
        await until(failures, lambda f: len(f) >= 5)
        await commit_rows(database_url, "wf.out.test.6", 1)
        await until(failures, lambda f: len(f) >= 6)
        assert await relay.lag() == 3
        assert await stream_messages(js) == []

    times = recorder.failures(bad)
    gaps = [later - earlier for earlier, later in itertools.pairwise(times)]
    # Delay n lies in [c/2, c] with c = 0.05 * 2**(n-1): each gap at least the one before.
    assert gaps[0] >= 0.025
    assert all(later >= earlier - 0.01 for earlier, later in itertools.pairwise(gaps))
    assert times[4] - times[0] >= 0.025 + 0.05 + 0.1 + 0.2
    assert {i for i, *_ in recorder.outcomes} == {bad}, "nothing behind the bad row was sent"


async def test_fetch_reads_in_commit_order_through_the_index(db: asyncpg.Connection) -> None:
    await db.execute(
        "INSERT INTO outbox (subject, body) "
        "SELECT 'wf.out.test.8', '\\x00'::bytea FROM generate_series(1, 20000)"
    )
    await db.execute("ANALYZE outbox")
    plan = await db.fetchval("EXPLAIN (FORMAT JSON) " + FETCH, 0, 0, 500)
    assert "outbox_commit_order" in plan
    assert '"Sort"' not in plan
