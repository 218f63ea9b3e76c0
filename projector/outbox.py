"""The projector publishes the outbox rows of a decision itself, right after the commit.

That takes the relay's hop (its wake-up, its read, its publish) out of every transition. The
relay stays the crash-safe backstop: the rows were written with `relay_after = now() + grace`,
and whatever is still unmarked then (the projector crashed between commit and publish, the
broker did not answer, a row was refused) the relay publishes in commit order. Both send the
same `Nats-Msg-Id` (`<database instance>-<row id>`), so a row published by both is stored
once by the stream's duplicate window, far longer than the grace.

Rows are marked published only once JetStream acknowledged them, and only the acknowledged
prefix: a workflow with a row left unmarked has its later decisions left to the relay too
(the commit statement sees it), so its messages never overtake one another. The marks ride
on the projector's next commit (no statement of their own on the hot path); when no commit
comes within `MARK_EVERY` seconds, `keep_marking` writes them alone, without waiting for the
disk. A mark is a hint: lost in a crash, it only means the relay publishes the rows again,
which the duplicate window drops. Marks are pending only after the publishes are
acknowledged, and a workflow's next event is decided only after that; its next commit,
which may run beside the commit carrying them, is told every row published and not yet
known marked (`take_marks`), so it never counts those as left behind: its rows are the
projector's to publish again.

Nothing here raises: a failure leaves the rows to the relay.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

import asyncpg
from nats.js import JetStreamContext

from interlock.contracts import subjects
from interlock.messaging.crashpoints import crash_point
from interlock.messaging.ordered import OrderedPublisher, Outgoing, traced
from interlock.messaging.waiting import wait_any

log = logging.getLogger("interlock.projector")
TRACER = "interlock.projector"

Message = tuple[str, dict[str, str], bytes]
"""(subject, headers, body) of one outbox row, as the commit wrote it."""

MARK = """
WITH hint AS (SELECT set_config('synchronous_commit', 'off', true))
UPDATE outbox SET published_at = now()
FROM hint WHERE id = ANY($1::bigint[]) AND published_at IS NULL
"""
"""Mark rows published; `synchronous_commit` off for this transaction only (a lost mark
costs a duplicate publish the stream drops, never a message)."""

INSTANCE = "SELECT value FROM interlock_meta WHERE key = 'instance'"
MARK_EVERY = 0.05
"""Seconds acknowledged rows may wait for a commit to carry their mark (far inside the
relay's grace)."""
MAX_PENDING_MARKS = 10_000
"""Beyond this many pending marks they are written at once, not carried."""


class OutboxPublisher:
    def __init__(
        self, js: JetStreamContext, pool: asyncpg.Pool, instance: str, grace: float
    ) -> None:
        """`grace`: seconds the relay leaves a row the projector will publish (the rows are
        written with it; the relay publishes any still unmarked after it)."""
        self._publisher = OrderedPublisher(js)
        self._pool = pool
        self._instance = instance
        self.grace = grace
        self._warm = False
        self._marks: list[int] = []
        """Published and acknowledged, for the next commit to mark."""
        self._marking: set[int] = set()
        """Being marked by a commit that has not committed yet."""
        self._pending = asyncio.Event()
        """Set when marks may be waiting for `keep_marking` (an idle projector sleeps)."""

    @classmethod
    async def open(cls, js: JetStreamContext, pool: asyncpg.Pool, grace: float) -> OutboxPublisher:
        """Raises asyncpg's errors if the database cannot be read."""
        async with pool.acquire() as conn:
            instance = await conn.fetchval(INSTANCE)
        return cls(js, pool, str(instance), grace)

    async def publish(self, ids: Sequence[int], messages: Sequence[Message]) -> None:
        """Publish the committed rows `ids` (in order, with their `messages`) and mark the
        acknowledged prefix published. Never raises: the relay publishes what is left."""
        if not ids:
            return
        crash_point("projector.before_publish")
        try:
            acked = await self._send(ids, messages)
            self._marks.extend(ids[:acked])
            self._pending.set()
            if len(self._marks) > MAX_PENDING_MARKS:
                await self.flush_marks()
        except Exception as exc:  # the relay's grace covers every failure here
            log.warning("publishing after commit failed, left to the relay: %r", exc)

    def take_marks(self) -> tuple[list[int], list[int]]:
        """For the commit about to run: the rows it is to mark, and every row published but
        not yet known marked (those being marked by commits still running too), which its
        workflow check must not count as left behind."""
        marks, self._marks = self._marks, []
        self._marking.update(marks)
        return marks, list(self._marking)

    def marked(self, marks: list[int]) -> None:
        """The commit that carried `marks` committed."""
        self._marking.difference_update(marks)

    def restore_marks(self, marks: list[int]) -> None:
        """Give back the marks of a commit that failed."""
        self._marking.difference_update(marks)
        self._marks[:0] = marks
        self._pending.set()

    async def flush_marks(self) -> None:
        """Write the pending marks in a statement of their own. Never raises."""
        marks, _ = self.take_marks()
        if not marks:
            return
        try:
            async with self._pool.acquire() as conn:
                await conn.execute(MARK, marks)
        except Exception as exc:
            self.restore_marks(marks)
            log.warning("marking published rows failed, kept for the next commit: %r", exc)
        else:
            self.marked(marks)

    async def keep_marking(self, stop: asyncio.Event) -> None:
        """Until `stop` (then once more): write marks no commit carried within MARK_EVERY
        of their publish; asleep while there are none."""
        while not stop.is_set():
            await wait_any([stop, self._pending])
            await wait_any([stop], MARK_EVERY)
            self._pending.clear()  # before the marks are taken: later ones set it again
            await self.flush_marks()
        await self.flush_marks()

    async def _send(self, ids: Sequence[int], messages: Sequence[Message]) -> int:
        """How many rows, from the first, JetStream acknowledged (`messaging.ordered`: all
        pipelined once the connection has published once; the very first goes alone)."""
        outgoing = [
            Outgoing(subject, {**headers, subjects.HEADER_MSG_ID: self._message_id(i)}, body)
            for i, (subject, headers, body) in zip(ids, messages, strict=True)
        ]
        sent = await self._publisher.publish(
            outgoing,
            lambda i, out: traced(
                TRACER, out.subject, out.headers, {"interlock.outbox_id": ids[i]}
            ),
            head_alone=not self._warm,
        )
        self._warm = self._warm or sent.acked > 0
        if sent.error is not None:
            log.info("row %d not published after commit: %r", ids[sent.acked], sent.error)
        return sent.acked

    def _message_id(self, row_id: int) -> str:
        return subjects.outbox_message_id(self._instance, row_id)
