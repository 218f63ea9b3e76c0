"""The projector publishes a decision's outbox rows itself; the relay is the backstop.

Rows written for the projector (`relay_after` = commit + grace) are left alone by the relay
during the grace. Whatever the projector did not publish and mark by then (it crashed between
its commit and its publish, or between its publish and its mark) the relay publishes, and a
consumer still sees every message exactly once, in commit order: both send the same message
id, and the stream's duplicate window drops the second copy. Either one traces its publish
the same way, as a child of the decision that wrote the row, under its own tracer.
"""

from __future__ import annotations

import asyncio
import json

import asyncpg
from nats.js import JetStreamContext
from opentelemetry.trace import SpanKind

from interlock.config.access import job_signing_key
from interlock.config.settings import Settings
from interlock.projector.outbox import Message, OutboxPublisher
from interlock.projector.service import Projector
from interlock.projector.signing import JobSigner
from interlock.projector.store.postgres import open_store
from interlock.relay import OutboxRelay
from tests.support.direct import to_gathering_evidence
from tests.support.polling import eventually
from tests.support.relay_rows import TRACEPARENT, Recorder, published_ids, stream_messages
from tests.support.telemetry import recorded
from tests.support.waiting import until
from tests.support.workflows import REGISTRY

GRACE = 0.6


async def _committed(
    db: asyncpg.Connection, count: int, headers: dict[str, str] | None = None
) -> tuple[list[int], list[Message]]:
    """`count` rows of one workflow committed as a projector that publishes them writes
    them (due to the relay only after the grace), each with the stored `headers`."""
    messages: list[Message] = [
        (f"wf.out.test.{n}", dict(headers or {}), f"m{n}".encode()) for n in range(count)
    ]
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
        publisher = await OutboxPublisher.open(js, pool, GRACE)
        await publisher.publish(ids, messages)
        await publisher.flush_marks()  # as `keep_marking` does when no commit carries them
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
        assert await relay.lag() == 0  # in their streams: no lag before the relay passes them
        assert await relay.publish_pending() == 2  # the cursor moves past them at once
        assert await relay.lag() == 0
    finally:
        await relay.close()
    assert recorder.outcomes == []
    assert await published_ids(js) == ids


async def test_either_publisher_traces_its_publish_as_a_child_of_the_decision(
    database_url: str, db: asyncpg.Connection, js: JetStreamContext
) -> None:
    spans = recorded()
    earlier = len(spans.finished())
    instance = await db.fetchval("SELECT value FROM interlock_meta WHERE key = 'instance'")
    ids, messages = await _committed(db, 2, {"traceparent": TRACEPARENT})
    await _published_by_the_projector(database_url, js, ids[:1], messages[:1])  # then died
    relay = OutboxRelay(database_url, js)

    async def relayed() -> list[int]:
        await relay.publish_pending()
        return await published_ids(js)

    try:
        await until(relayed, lambda published: published == ids, within=10)
    finally:
        await relay.close()

    publishes = {
        (span.attributes or {}).get("interlock.outbox_id"): span
        for span in spans.finished()[earlier:]
    }
    _, _, decision, _ = TRACEPARENT.split("-")
    for row_id, subject, publisher in zip(
        ids, ("wf.out.test.0", "wf.out.test.1"), ("projector", "relay"), strict=True
    ):
        span = publishes[row_id]
        assert span.instrumentation_scope is not None
        assert span.instrumentation_scope.name == f"interlock.{publisher}"
        assert span.parent is not None
        assert format(span.parent.span_id, "016x") == decision
        assert (span.name, span.kind) == (f"{subject} publish", SpanKind.PRODUCER)
        assert dict(span.attributes or {}) == {
            "messaging.system": "nats",
            "messaging.destination.name": subject,
            "messaging.operation.type": "send",
            "messaging.message.id": f"{instance}-{row_id}",
            "interlock.outbox_id": row_id,
        }


async def test_the_next_commit_carries_the_marks_so_the_workflow_stays_the_projectors(
    database_url: str, db: asyncpg.Connection, js: JetStreamContext
) -> None:
    """No statement of its own marks a decision's published rows: the next commit does. A
    workflow whose rows are still unmarked at its next decision would be left to the relay
    (its rows due at once, published a relay pass later) for as long as marks lag."""
    store = await open_store(database_url, size=2)
    try:
        publisher = await OutboxPublisher.open(js, store.pool, GRACE)
        store.publish_after_commit(publisher)
        projector = Projector(
            store, registry=REGISTRY, signer=JobSigner(job_signing_key(Settings()))
        )
        await to_gathering_evidence(projector, store, "wf-marks")  # START, then a result

        rows = await db.fetch(
            "SELECT txid = max(txid) OVER () AS last, published_at IS NOT NULL AS marked, "
            "relay_after > created_at AS theirs FROM outbox WHERE workflow_id = 'wf-marks'"
        )
    finally:
        await store.close()

    assert {r["last"] for r in rows} == {True, False}  # two decisions wrote rows
    assert all(r["theirs"] for r in rows), "every decision's rows were the projector's"
    assert all(r["marked"] for r in rows if not r["last"]), "marked by the next commit"


async def test_marks_no_commit_carries_are_written_alone_and_again_after_a_pause(
    database_url: str, db: asyncpg.Connection, js: JetStreamContext
) -> None:
    """`keep_marking`, idle until something is published: the marks of a publish no commit
    follows are written within moments, and so are those of a later one."""
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=1)
    stop = asyncio.Event()
    try:
        publisher = await OutboxPublisher.open(js, pool, GRACE)
        marking = asyncio.create_task(publisher.keep_marking(stop))
        for _ in range(2):
            ids, messages = await _committed(db, 2)
            await publisher.publish(ids, messages)

            async def marked(ids: list[int] = ids) -> bool:
                return not set(ids) & set(await _unmarked(db))

            await eventually(marked, what="the marks written with no commit to carry them")
        stop.set()
        await asyncio.wait_for(marking, 5)
    finally:
        stop.set()
        await pool.close()
