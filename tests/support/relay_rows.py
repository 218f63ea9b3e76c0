"""Outbox rows and what the relay makes of them: shared by the relay's integration tests.

Rows are inserted with SQL; messages are published under `wf.out.test.<n>` (kept by the
WF_OUT stream) and read back in stream order, so each test sees exactly what a consumer would.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import asyncpg
from nats.js import JetStreamContext
from nats.js.api import PubAck, RawStreamMsg

from interlock.contracts import subjects
from interlock.relay import OutboxRelay, OutboxRow, PublishDone
from tests.support.streams import messages_of
from tests.support.waiting import until

Position = tuple[int, int]  # (txid, id)
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


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


async def commit_rows(database_url: str, subject: str, count: int) -> list[Position]:
    conn = await asyncpg.connect(database_url)
    try:
        async with conn.transaction():
            return [await insert(conn, subject, f"m{n}".encode()) for n in range(count)]
    finally:
        await conn.close()


async def stream_messages(
    js: JetStreamContext, stream: str = subjects.STREAM_OUT
) -> list[RawStreamMsg]:
    """Every message the stream holds, in stream (publication) order."""
    return await messages_of(js, stream)


def row_id(message: RawStreamMsg) -> int:
    return int((message.headers or {})[subjects.HEADER_MSG_ID].rsplit("-", 1)[1])


async def published_ids(js: JetStreamContext) -> list[int]:
    return [row_id(m) for m in await stream_messages(js)]


async def expect_published(js: JetStreamContext, count: int, within: float = 5.0) -> list[int]:
    return await until(lambda: published_ids(js), lambda ids: len(ids) >= count, within)


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
