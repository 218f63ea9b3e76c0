"""Group commit: the decisions that become ready while the commits in flight (`LANES` of
them) are running are committed together, by one statement (`batch_sql`), as soon as one of
them returns.

A decision ready when a lane is free is sent at once, so a quiet projector waits for nothing;
under load each round trip carries every decision that queued behind the last (up to
`MAX_BATCH`): one write to the database's socket, one statement, one WAL flush, instead
of one of each per decision. Each decision keeps its own compare-and-set and gets its own
answer (written or not, and the outbox rows left to its caller to publish).

A decision whose event was accepted before is told apart inside the statement (`sql.DUPLICATE`),
so it fails alone. A batch the database refuses as a whole (a value it cannot store, a
duplicate racing another writer's) is sent again one decision at a time, so only the decision
at fault fails, with its own error; the others are unaffected (the refused statement wrote
nothing). A lost database fails every decision of the batch alike (each caller waits it out and
decides again).

The rows the projector published since the last commit are marked by the batch's first
decision (`projector.outbox`), as a single commit marks them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import asyncpg

from interlock.messaging.crashpoints import crash_point
from interlock.projector.errors import DuplicateEvent
from interlock.projector.store import batch_sql, sql

if TYPE_CHECKING:
    from interlock.projector.outbox import OutboxPublisher

MAX_BATCH = 16
"""Decisions one statement commits at most (the projector decides at most this many at once
by default, so a full batch is every decision in flight)."""
LANES = 2
"""Statements in flight at once: a decision that becomes ready while one is in flight goes in
the next at once, not after it; those ready while both are in flight go together."""
Outcome = tuple[int, list[int]]
"""(written, the ids of the outbox rows left to the caller to publish)."""
_Waiting = tuple[str, dict[str, Any], "asyncio.Future[Outcome]"]
Connect = Callable[[], AbstractAsyncContextManager[asyncpg.Connection]]
_SINGLE = {"commit": sql.COMMIT, "create": sql.CREATE}


class Batches:
    def __init__(
        self,
        connect: Connect,
        publisher: Callable[[], OutboxPublisher | None],
        max_batch: int = MAX_BATCH,
    ) -> None:
        """`connect`: a connection with the store's error mapping (`DuplicateEvent`,
        `StoreUnavailable`); `publisher`: whose marks the commits carry, if any."""
        self._connect = connect
        self._publisher = publisher
        self._max = max_batch
        self._waiting: list[_Waiting] = []
        self._senders: set[asyncio.Task[None]] = set()
        self.statements = 0
        """Statements sent so far (for tests and measurements)."""
        self.decisions = 0
        """Decisions those statements committed or refused."""

    async def write(self, kind: str, values: dict[str, Any]) -> Outcome:
        """Commit one decision (`commit` or `create`) with its statement `values`."""
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._waiting.append((kind, values, future))
        if len(self._senders) < LANES:
            sender = asyncio.create_task(self._send_all())
            self._senders.add(sender)
            sender.add_done_callback(self._senders.discard)
        return await future

    async def _send_all(self) -> None:
        try:
            while self._waiting:
                # One kind per statement: a statement for each count of each kind, not one
                # for every sequence of kinds (each is prepared and planned on its own).
                kind = self._waiting[0][0]
                batch: list[_Waiting] = []
                rest: list[_Waiting] = []
                for waiting in self._waiting:
                    same = waiting[0] == kind and len(batch) < self._max
                    (batch if same else rest).append(waiting)
                self._waiting = rest
                await self._send(batch)
        except BaseException as exc:  # cancelled with the store: nobody is left waiting
            _fail(self._waiting, exc)
            self._waiting = []
            raise

    async def _send(self, batch: list[_Waiting]) -> None:
        publisher = self._publisher()
        marks, published = publisher.take_marks() if publisher is not None else ([], [])
        grace = publisher.grace if publisher is not None else None
        for index, (_, values, _) in enumerate(batch):
            values["publish_grace"] = grace
            values["marks"] = marks if index == 0 else []
            values["published"] = published
        crash_point("projector.before_commit")
        try:
            outcomes = await self._statement(batch)
        except BaseException as exc:
            if publisher is not None:
                publisher.restore_marks(marks)
            if len(batch) > 1 and isinstance(exc, DuplicateEvent | asyncpg.PostgresError):
                await self._one_by_one(batch)
            else:
                _fail(batch, exc)
            if not isinstance(exc, Exception):
                raise
            return
        if publisher is not None:
            publisher.marked(marks)
        for (_, _, future), outcome in zip(batch, outcomes, strict=True):
            if not future.done():
                future.set_result(outcome)

    async def _statement(self, batch: list[_Waiting]) -> list[Outcome]:
        self.statements += 1
        self.decisions += len(batch)
        if len(batch) == 1:
            kind, values, _ = batch[0]
            single = _SINGLE[kind]
            async with self._connect() as conn:
                written, deferred = await conn.fetchrow(single.sql, *single.args(values))
            return [(int(written), list(deferred))]
        statement = batch_sql.statement(tuple(kind for kind, _, _ in batch))
        arguments = batch_sql.arguments(statement, [values for _, values, _ in batch])
        async with self._connect() as conn:
            row = await conn.fetchrow(statement.sql, *arguments)
        return batch_sql.outcomes(row, len(batch))

    async def _one_by_one(self, batch: list[_Waiting]) -> None:
        """Each decision of a refused batch alone, each with its own answer or error (the
        marks were given back: the next commit carries them)."""
        for waiting in batch:
            waiting[1]["marks"] = []
            try:
                [outcome] = await self._statement([waiting])
            except Exception as exc:
                _fail([waiting], exc)
            else:
                if not waiting[2].done():
                    waiting[2].set_result(outcome)


def _fail(batch: list[_Waiting], exc: BaseException) -> None:
    for _, _, future in batch:
        if future.done():
            continue
        if isinstance(exc, Exception):
            future.set_exception(exc)
        else:  # cancelled, or the process is ending
            future.cancel()
