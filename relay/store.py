"""The relay's side of PostgreSQL: one dedicated asyncpg connection per relay.

That connection holds the leadership lock (a session advisory lock, released by the server
when the connection dies), listens for outbox notifications, reads committed rows in commit
order and moves the cursor. Driver errors surface as `StoreUnavailable` or
`DatabaseNotMigrated`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import asyncpg

from interlock.contracts.errors import DatabaseNotMigrated, StoreUnavailable
from interlock.relay.errors import LeadershipLost

CHANNEL = "interlock_outbox"

# Rows of transactions still running are held back until every older transaction has
# finished (pg_snapshot_xmin), so nothing can later commit behind the cursor. Both
# conditions are bounds of one scan of outbox_commit_order (pg_current_snapshot is stable).
# `hold`: seconds the relay must still leave an unmarked row to the projector that will
# publish it itself (0 once its grace is over, and for every row written for the relay).
FETCH = """
SELECT id, txid, subject, headers::text AS headers, body, published_at IS NOT NULL AS published,
       greatest(extract(epoch FROM relay_after - now()), 0)::float8 AS hold
FROM outbox
WHERE (txid, id) > ($1::xid8, $2::bigint)
  AND txid < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY txid, id
LIMIT $3
"""

# The rows the relay published are marked as it moves past them, in the same statement.
ADVANCE = """
WITH marked AS (
    UPDATE outbox SET published_at = now()
    WHERE id = ANY($6::bigint[]) AND published_at IS NULL
)
UPDATE relay_cursor SET txid = $2::xid8, last_id = $3, updated_at = now()
WHERE name = $1 AND txid = $4::xid8 AND last_id = $5
"""

ENSURE_CURSOR = """
INSERT INTO relay_cursor (name, txid, last_id) VALUES ($1, '0'::xid8, 0)
ON CONFLICT (name) DO NOTHING
"""

# The rows of jobs still open are kept: the open-job sweeper copies them (`relay.sweeper`).
PRUNE = """
DELETE FROM outbox o
WHERE (o.txid, o.id) <= ($1::xid8, $2::bigint)
  AND o.created_at < now() - make_interval(secs => $3)
  AND NOT EXISTS (
      SELECT 1 FROM workflows w
      WHERE w.id = o.workflow_id
        AND jsonb_typeof(w.execution -> 'open_jobs') = 'object'
        AND w.execution -> 'open_jobs' ? (convert_from(o.body, 'UTF8')::jsonb ->> 'event_id')
  )
"""

# Rows after the cursor not yet in their streams (the projector marks what it published
# itself, which the relay passes later), and the age in seconds of the oldest (0 when none).
LAG = """
SELECT count(*) AS rows,
       coalesce(extract(epoch FROM now() - min(o.created_at)), 0)::float8 AS oldest_seconds
FROM outbox o
WHERE o.published_at IS NULL AND NOT EXISTS (
    SELECT 1 FROM relay_cursor c
    WHERE c.name = $1 AND (o.txid, o.id) <= (c.txid, c.last_id)
)
"""

UNAVAILABLE = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.OperatorInterventionError,
)


@dataclass(frozen=True, slots=True)
class Cursor:
    """Position after the last relayed row, in commit-safe (txid, id) order."""

    txid: int
    last_id: int


@dataclass(frozen=True, slots=True)
class OutboxRow:
    id: int
    txid: int
    subject: str
    headers: dict[str, Any]
    body: bytes
    published: bool = False
    """Known to be in its stream already (the projector published it after its commit)."""
    hold: float = 0.0
    """Seconds to leave it still to the projector that committed it (0: publish it now)."""

    @property
    def position(self) -> Cursor:
        return Cursor(self.txid, self.id)


def lock_key(name: str) -> int:
    """The advisory-lock key of relay `name`: the same in every process and release."""
    digest = hashlib.blake2b(b"interlock.relay:" + name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@asynccontextmanager
async def _translated() -> AsyncIterator[None]:
    try:
        yield
    except asyncpg.UndefinedTableError as exc:
        raise DatabaseNotMigrated(
            f"outbox schema not found: {exc}", hint="apply the database migrations first"
        ) from exc
    except UNAVAILABLE as exc:
        raise StoreUnavailable(f"database unavailable: {type(exc).__name__}: {exc}") from exc


class OutboxStore:
    """The relay's dedicated connection. Not safe for concurrent use by several tasks."""

    def __init__(self, connection: asyncpg.Connection, name: str, instance: str) -> None:
        self._connection = connection
        self._name = name
        self.instance = instance
        """This database's random id, the prefix of every Nats-Msg-Id the relay sends."""

    @classmethod
    async def open(cls, url: str, name: str, on_notify: Callable[[], None]) -> OutboxStore:
        """Connect, LISTEN for outbox inserts (`on_notify` runs on each) and make sure the
        cursor row of relay `name` exists (at the very start on first use)."""
        async with _translated():
            connection = await asyncpg.connect(url, timeout=10)
            try:
                await connection.add_listener(CHANNEL, lambda *_: on_notify())
                await connection.execute(ENSURE_CURSOR, name)
                instance = await connection.fetchval(
                    "SELECT value FROM interlock_meta WHERE key = 'instance'"
                )
            except BaseException:
                connection.terminate()
                raise
        return cls(connection, name, str(instance))

    async def try_lock(self) -> bool:
        """Take the leadership lock if no other session holds it; held until `close`."""
        async with _translated():
            locked = await self._connection.fetchval(
                "SELECT pg_try_advisory_lock($1)", lock_key(self._name)
            )
        return bool(locked)

    async def cursor(self) -> Cursor:
        async with _translated():
            row = await self._connection.fetchrow(
                "SELECT txid, last_id FROM relay_cursor WHERE name = $1", self._name
            )
        return Cursor(int(row["txid"]), int(row["last_id"]))

    async def fetch(self, after: Cursor, limit: int) -> list[OutboxRow]:
        """Up to `limit` committed rows after `after`, in (txid, id) order, none of which can
        ever be preceded by a row committed later."""
        async with _translated():
            records = await self._connection.fetch(FETCH, after.txid, after.last_id, limit)
        return [
            OutboxRow(
                r["id"],
                int(r["txid"]),
                r["subject"],
                json.loads(r["headers"]),
                r["body"],
                r["published"],
                0.0 if r["published"] else r["hold"],
            )
            for r in records
        ]

    async def advance(self, old: Cursor, new: Cursor, published: Sequence[int] = ()) -> None:
        """Compare-and-set the cursor from `old` to `new`, marking the rows `published`.
        Zero rows updated means someone else moved it: raises `LeadershipLost`."""
        async with _translated():
            status = await self._connection.execute(
                ADVANCE, self._name, new.txid, new.last_id, old.txid, old.last_id, list(published)
            )
        if status != "UPDATE 1":
            raise LeadershipLost(f"relay cursor {self._name!r} moved under this relay")

    async def prune(self, upto: Cursor, retention_seconds: float) -> int:
        """Delete relayed rows (at or before `upto`) older than the retention; returns how many."""
        async with _translated():
            status = await self._connection.execute(
                PRUNE, upto.txid, upto.last_id, retention_seconds
            )
        return int(status.rsplit(" ", 1)[-1])

    async def close(self) -> None:
        """Close the connection, which also releases the leadership lock."""
        await close_quietly(self._connection)


async def close_quietly(connection: asyncpg.Connection) -> None:
    """Close gracefully within 5 s, else drop the socket; never raises."""
    try:
        await connection.close(timeout=5)
    except Exception:
        connection.terminate()


async def lag(url: str, name: str) -> int:
    """Rows after relay `name`'s stored cursor, on a short-lived connection of its own."""
    async with _translated():
        connection = await asyncpg.connect(url, timeout=10)
        try:
            return int(await connection.fetchval(LAG, name))  # the first column: rows
        finally:
            await connection.close()
