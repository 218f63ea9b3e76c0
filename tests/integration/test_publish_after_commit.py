"""The projector publishes a decision's outbox rows itself; the relay is the backstop.

Rows written for the projector (`relay_after` = commit + grace) are left alone by the relay
during the grace. Whatever the projector did not publish and mark by then (it crashed between
its commit and its publish, or between its publish and its mark) the relay publishes, and a
consumer still sees every message exactly once, in commit order: both send the same message
id, and the stream's duplicate window drops the second copy.
"""

from __future__ import annotations

import json

import asyncpg
from nats.js import JetStreamContext

from interlock.projector.outbox import Message, OutboxPublisher
from interlock.relay import OutboxRelay
from tests.support.relay_rows import Recorder, published_ids, stream_messages
from tests.support.waiting import until

GRACE = 0.6


async def _committed(db: asyncpg.Connection, count: int) -> tuple[list[int], list[Message]]:
    """`count` rows of one workflow committed as a projector that publishes them writes
    them (due to the relay only after the grace)."""
    messages: list[Message] = [(f"wf.out.test.{n}", {}, f"m{n}".encode()) for n in range(count)]
    async with db.transaction():
        ids = [
            await db.fetchval(
                "INSERT INTO outbox (subject, body, headers, workflow_id, relay_after) "
                "VALUES ($1, $2, $3::jsonb, 'wf-1', now() + make_interval(secs => $4)) "
                "RETURNING id",
                subject,
                body,
                json.dumps(headers),
                GRACE,
            )
            for subject, headers, body in messages
        ]
    return ids, messages


async def _published_by_the_projector(
    database_url: str, js: JetStreamContext, ids: list[int], messages: list[Message]
) -> None:
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=1)
    try:
        await (await OutboxPublisher.open(js, pool, GRACE)).publish(ids, messages)
    finally:
        await pool.close()


async def _unmarked(db: asyncpg.Connection) -> list[int]:
    rows = await db.fetch("SELECT id FROM outbox WHERE published_at IS NULL ORDER BY id")
    return [r["id"] for r in rows]


async def test_rows_the_projector_never_published_are_published_once_after_the_grace(
    database_url: str, db: asyncpg.Connection, js: JetStreamContext
) -> None:
    ids, _ = await _committed(db, 3)  # the projector died between its commit and publish
    relay = OutboxRelay(database_url, js)
    try:
        assert await relay.publish_pending() == 0  # within the grace: left to the projector
        assert await stream_messages(js) == []

        await until(relay.publish_pending, lambda moved: moved == 3, within=10)
        assert await relay.publish_pending() == 0
    finally:
        await relay.close()

    assert await published_ids(js) == ids  # once each, in commit order
    assert await _unmarked(db) == []


async def test_a_lost_mark_makes_the_relay_publish_again_and_the_stream_drops_it(
    database_url: str, db: asyncpg.Connection, js: JetStreamContext
) -> None:
    ids, messages = await _committed(db, 3)
    await _published_by_the_projector(database_url, js, ids, messages)
    assert await _unmarked(db) == []
    assert await published_ids(js) == ids
    await db.execute("UPDATE outbox SET published_at = NULL")  # died before the mark held

    recorder = Recorder()
    relay = OutboxRelay(database_url, js, publish_hook=recorder)
    try:
        await until(relay.publish_pending, lambda moved: moved == 3, within=10)
    finally:
        await relay.close()

    assert [(i, ack.duplicate) for i, ack in recorder.acks()] == [(i, True) for i in ids]
    assert await published_ids(js) == ids  # a consumer sees each message once


async def test_rows_the_projector_published_and_marked_are_skipped_by_the_relay(
    database_url: str, db: asyncpg.Connection, js: JetStreamContext
) -> None:
    ids, messages = await _committed(db, 2)
    await _published_by_the_projector(database_url, js, ids, messages)

    recorder = Recorder()
    relay = OutboxRelay(database_url, js, publish_hook=recorder)
    try:
        assert await relay.publish_pending() == 2  # the cursor moves past them at once
        assert await relay.lag() == 0
    finally:
        await relay.close()
    assert recorder.outcomes == []
    assert await published_ids(js) == ids
