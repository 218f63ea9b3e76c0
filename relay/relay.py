"""The outbox relay: publishes committed outbox rows to JetStream, in commit-safe order.

Guarantees: every committed row is published, in (txid, id) order, and no row is skipped,
even one whose transaction took a lower id but committed later. Delivery to the stream is
at least once; the Nats-Msg-Id makes it effectively once inside the stream's duplicate
window (a crash between publish and cursor update republishes the same ids). One relay per
name publishes at a time (a Postgres advisory lock); the others wait in standby.

The projector publishes most rows itself right after its commit (`projector.outbox`) and
marks them; such rows are written to wait for it (`relay_after`, its grace). The relay skips
marked rows, and stops at the first unmarked row still within its grace until the grace is
over: then it publishes it under the same message id, which the stream drops if the
projector's copy arrived after all. So the relay is the backstop for a projector that
crashed or failed between its commit and its publish, and commit order is kept.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nats.js import JetStreamContext

from interlock.contracts.errors import StoreUnavailable
from interlock.messaging.backoff import Backoff
from interlock.messaging.crashpoints import crash_point
from interlock.messaging.waiting import wait_any
from interlock.relay import store
from interlock.relay.errors import LeadershipLost, OutboxPublishFailed
from interlock.relay.publish import Publisher, PublishHook, refusal_reason
from interlock.relay.store import Cursor, OutboxRow, OutboxStore
from interlock.relay.tracing import traced_publish

log = logging.getLogger(__name__)
MIN_HOLD = 0.01
"""Shortest pause before looking again at a row still left to the projector."""


@dataclass(frozen=True, slots=True)
class _Failing:
    """Consecutive failed attempts of the row at the head of the cursor (in memory only)."""

    row_id: int = 0
    attempts: int = 0
    refusals: int = 0

    def next(self, row_id: int, *, refused: bool) -> _Failing:
        same = self if row_id == self.row_id else _Failing(row_id)
        return _Failing(row_id, same.attempts + 1, same.refusals + 1 if refused else 0)


class OutboxRelay:
    """Relays one database's outbox under relay name `name`. One task drives it (`run`, or
    `publish_pending`/`prune` calls); `lag` may be called from any task."""

    def __init__(
        self,
        database_url: str,
        js: JetStreamContext,
        *,
        name: str = "default",
        batch_size: int = 500,
        poll_interval: float = 1.0,
        retention_seconds: float = 3600.0,
        prune_interval: float = 60.0,
        dead_letter_after: int = 10,
        backoff: Backoff | None = None,
        publish_hook: PublishHook = traced_publish,
        on_pass: Callable[[], None] = lambda: None,
    ) -> None:
        """`dead_letter_after`: consecutive refusals of one row (no stream for its subject,
        rejected by the stream) after which it goes to `wf.dlq.relay` instead; timeouts and
        lost connections are retried forever. `publish_hook`: see `relay.publish`. `on_pass`:
        called after every pass that published all that was ready (the sign of progress)."""
        self._url = database_url
        self._js = js
        self._name = name
        self._batch_size = batch_size
        self._poll_interval = poll_interval
        self._retention = retention_seconds
        self._prune_interval = prune_interval
        self._dead_letter_after = dead_letter_after
        self._backoff = backoff or Backoff(cap=2.0)  # an outage ends, at most 2 s late
        self._hook = publish_hook
        self._on_pass = on_pass
        self._store: OutboxStore | None = None
        self._publisher: Publisher | None = None
        self._cursor: Cursor | None = None
        self._failing = _Failing()
        self._store_failures = 0
        self._next_prune = 0.0
        self._wakeup = asyncio.Event()
        self._held = 0.0

    @property
    def is_leader(self) -> bool:
        return self._cursor is not None

    async def run(self, stop: asyncio.Event) -> None:
        """Relay until `stop` is set, then close the connection (releasing leadership).

        Publish failures and database outages are logged and retried after a backoff;
        anything else (a bug, a missing schema) propagates.
        """
        try:
            while not stop.is_set():
                self._wakeup.clear()
                pause = await self._step()
                if pause is None:
                    await wait_any([stop, self._wakeup], self._poll_interval)
                elif pause > 0:
                    await wait_any([stop], pause)
        finally:
            await self.close()

    async def publish_pending(self) -> int:
        """Publish every row that is ready, batch by batch; returns how many rows the cursor
        moved past (published, or dead-lettered). Returns 0 without publishing when another
        relay leads. Raises `OutboxPublishFailed` (the cursor stops just before the failing row),
        `StoreUnavailable`, `LeadershipLost`."""
        try:
            return await self._publish_ready() if await self._lead() else 0
        except (StoreUnavailable, LeadershipLost):
            await self.close()
            raise

    async def lag(self) -> int:
        """Committed rows after this relay's stored cursor, including rows held back behind
        an older open transaction; on a connection of its own, so it works in standby too."""
        return await store.lag(self._url, self._name)

    async def prune(self) -> int:
        """Delete published rows (at or before the cursor) older than the retention; returns
        how many. Only the leader prunes: 0 otherwise. Raises `StoreUnavailable`."""
        if not self.is_leader:
            return 0
        try:
            return await self._ready_store().prune(self._position(), self._retention)
        except StoreUnavailable:
            await self.close()
            raise

    async def close(self) -> None:
        """Close the database connection; leadership passes to a standby relay."""
        current, self._store, self._cursor = self._store, None, None
        if current is not None:
            await current.close()

    async def _publish_ready(self) -> int:
        moved = 0
        self._held = 0.0
        while rows := await self._ready_store().fetch(self._position(), self._batch_size):
            try:
                moved += await self._relay(rows)
            except OutboxPublishFailed as exc:
                exc.published += moved
                raise
            if self._held or len(rows) < self._batch_size:
                break
        return moved

    async def _step(self) -> float | None:
        """One pass of `run`: None to wait for a wake-up, or seconds to pause first."""
        try:
            moved = await self.publish_pending()
            await self._prune_if_due()
        except OutboxPublishFailed as exc:
            cause = type(exc.__cause__).__name__
            log.warning(
                "relay %s: row %d: %s (attempt %d)", self._name, exc.row_id, cause, exc.attempts
            )
            return self._backoff.delay(exc.attempts)
        except (StoreUnavailable, LeadershipLost) as exc:
            self._store_failures += 1
            log.warning("relay %s: %s", self._name, exc)
            return self._backoff.delay(self._store_failures)
        self._store_failures = 0
        self._on_pass()
        if not self.is_leader:
            return self._poll_interval
        if self._held:  # nothing behind a held row may go before it: wait out its grace
            return min(max(self._held, MIN_HOLD), self._poll_interval)
        return 0.0 if moved else None

    async def _lead(self) -> bool:
        if self._store is None:
            self._store = await OutboxStore.open(self._url, self._name, self._wakeup.set)
            self._publisher = Publisher(self._js, self._store.instance, self._hook)
        if self._cursor is None and await self._store.try_lock():
            self._cursor = await self._store.cursor()
            log.info("relay %s: leading from %s", self._name, self._cursor)
        return self._cursor is not None

    async def _relay(self, rows: Sequence[OutboxRow]) -> int:
        """Publish one batch up to its first row still left to the projector (skipping rows
        the projector published), then move the cursor once past what is done."""
        assert self._publisher is not None
        ready = next((i for i, row in enumerate(rows) if row.hold > 0), len(rows))
        self._held = rows[ready].hold if ready < len(rows) else 0.0
        todo = [row for row in rows[:ready] if not row.published]
        outcome = await self._publisher.publish(todo)
        sent, error = outcome.acked, outcome.error
        if sent:
            crash_point("relay.after_publish")
        if error is not None and await self._dead_lettered(todo[sent], error):
            sent, error = sent + 1, None
        # Done: every row before the first one not sent (all of the ready ones if none).
        done = rows.index(todo[sent]) if sent < len(todo) else ready
        if done:
            await self._advance(rows[done - 1].position, [row.id for row in todo[:sent]])
        if error is not None:
            raise OutboxPublishFailed(rows[done].id, self._failing.attempts, done, error) from error
        self._failing = _Failing()
        return done

    async def _dead_lettered(self, row: OutboxRow, error: BaseException) -> bool:
        """Count a failed attempt of `row`; dead-letter it once refused often enough in a row
        (a timeout in between starts the count again: the broker may just be restarting)."""
        reason = refusal_reason(error)
        self._failing = self._failing.next(row.id, refused=reason is not None)
        if reason is None or self._failing.refusals < self._dead_letter_after:
            return False
        assert self._publisher is not None
        try:
            await self._publisher.dead_letter(row, error, reason)
        except Exception as exc:
            log.warning("relay %s: dead-lettering row %d failed: %r", self._name, row.id, exc)
            return False
        log.error(
            "relay %s: row %d (%s) dead-lettered: %s", self._name, row.id, row.subject, reason
        )
        return True

    async def _advance(self, new: Cursor, published: Sequence[int]) -> None:
        await self._ready_store().advance(self._position(), new, published)
        self._cursor = new

    async def _prune_if_due(self) -> None:
        if not self.is_leader or time.monotonic() < self._next_prune:
            return
        self._next_prune = time.monotonic() + self._prune_interval
        if pruned := await self.prune():
            log.info("relay %s: pruned %d published outbox rows", self._name, pruned)

    def _ready_store(self) -> OutboxStore:
        assert self._store is not None, "relay is not connected"
        return self._store

    def _position(self) -> Cursor:
        assert self._cursor is not None, "relay is not the leader"
        return self._cursor
