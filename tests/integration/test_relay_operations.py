"""The outbox relay in operation, against real PostgreSQL and real JetStream: one leader
among several relays and a standby's takeover, waking on NOTIFY, dead-lettering a row that
can never be published, and pruning what was published.
"""

from __future__ import annotations

import time

import asyncpg
import pytest
from nats.js import JetStreamContext

from interlock.contracts import subjects
from interlock.contracts.errors import StoreUnavailable
from interlock.relay import DEAD_LETTER_SUBJECT, Backoff, OutboxRelay
from tests.support.relay_rows import (
    TRACEPARENT,
    Recorder,
    commit_rows,
    expect_published,
    insert,
    published_ids,
    row_id,
    running,
    stream_messages,
)
from tests.support.waiting import until

FAST = Backoff(base=0.02, cap=0.2)


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

        await until(relays[0].lag, lambda lag: lag == 0)  # the cursor moved too
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
        await until(second.publish_pending, lambda moved: moved == 2)
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
        await until(relay.lag, lambda lag: lag == 0, within=2.0)


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
        await until(relay.lag, lambda lag: lag == 0)

    assert len(recorder.failures(bad)) == 3
    [dead] = await stream_messages(js, subjects.STREAM_DLQ)
    headers = dead.headers or {}
    assert dead.subject == DEAD_LETTER_SUBJECT
    assert dead.data == b"nobody stores this"
    assert headers[subjects.HEADER_DLQ_REASON] == "unroutable"
    assert headers[subjects.HEADER_DLQ_SUBJECT] == "nostream.x"
    assert headers["traceparent"] == TRACEPARENT
    assert row_id(dead) == bad
