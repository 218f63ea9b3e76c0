"""Keyed dispatch: concurrent across workflows, sequential within one workflow.

Messages arrive in stream order; each is chained behind the earlier messages of its own
workflow and decided once they are, with at most `workers` decisions running at a time.
`submit` never waits: a workflow stuck behind a dependency (its message retried in place)
holds back only its own later messages, never the fetch loop or another workflow. Memory is
bounded by the consumer's `max_ack_pending`, the most the server hands out unacknowledged.
A malformed message has no workflow: it is chained behind nothing, so it never waits for,
nor holds up, any other message; nor does one the projector refuses whatever its workflow's
state (`line_of`, `projector.lines`).

A message another projector partition decides (`owns` says no) is acknowledged at once.

Of the messages ready to be decided, a free slot goes to each sender in turn (`fairness`), so
one sender's backlog never stands between another sender and its next decision.

A message waiting its turn is kept alive (`in_progress`) so that its ack wait does not run
out and have the server deliver it a second time while the first copy is still queued.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress

from nats.aio.msg import Msg

from interlock.contracts.envelope import Envelope, parse_envelope, workflow_id_of
from interlock.contracts.errors import MalformedMessage
from interlock.projector.fairness import FairSlots, turn_of

log = logging.getLogger("interlock.projector")
Parsed = tuple[Msg, Envelope | MalformedMessage]
KEEP_ALIVE_S = 3.0
"""How often a waiting message is reported in progress; well inside any ack wait."""


def key_of(event: Envelope | MalformedMessage) -> str | None:
    """The workflow a message belongs to (a request's id is derived if not given)."""
    return None if isinstance(event, MalformedMessage) else workflow_id_of(event)


class KeyedDispatcher:
    def __init__(
        self,
        handle: Callable[[Parsed], Awaitable[None]],
        workers: int,
        *,
        keep_alive: float = KEEP_ALIVE_S,
        owns: Callable[[Envelope | MalformedMessage], bool] = lambda _: True,
        line_of: Callable[[Msg, Envelope | MalformedMessage], str | None] = (
            lambda _, event: key_of(event)
        ),
    ) -> None:
        self._handle = handle
        self._owns = owns
        self._line_of = line_of
        self._slots = FairSlots(workers)
        self._keep_alive = keep_alive
        self._tails: dict[str, asyncio.Task[None]] = {}
        self._running: set[asyncio.Task[None]] = set()

    async def submit(self, msg: Msg) -> None:
        """Chain `msg` behind earlier messages of its workflow; returns at once (or acks
        it, if another partition decides it)."""
        try:
            event: Envelope | MalformedMessage = parse_envelope(msg.data)
        except MalformedMessage as exc:
            event = exc
        if not self._owns(event):
            with suppress(Exception):  # lost with the connection: redelivered, acked again
                await msg.ack()
            return
        key = self._line_of(msg, event)
        previous = self._tails.get(key) if key is not None else None
        task = asyncio.create_task(self._decide((msg, event), previous))
        self._running.add(task)
        if key is not None:
            self._tails[key] = task
        task.add_done_callback(lambda done: self._forget(key, done))

    @property
    def in_flight(self) -> int:
        """Messages submitted and not yet finished."""
        return len(self._running)

    async def _decide(self, parsed: Parsed, previous: asyncio.Task[None] | None) -> None:
        if previous is not None:
            await self._alive_while(parsed[0], asyncio.shield(previous))
        await self._alive_while(parsed[0], self._slots.acquire(turn_of(*parsed)))
        try:
            await self._handle(parsed)
        except Exception:  # never let one message take the dispatcher down; it is redelivered
            log.exception("unexpected failure deciding %s", parsed[0].subject)
        finally:
            self._slots.release()

    async def _alive_while(self, msg: Msg, waiting: Awaitable[object]) -> None:
        future = asyncio.ensure_future(waiting)
        while True:
            done, _ = await asyncio.wait({future}, timeout=self._keep_alive)
            if done:
                with suppress(Exception):  # a predecessor's failure is its own business
                    future.result()
                return
            with suppress(Exception):  # a lost connection: the message is redelivered
                await msg.in_progress()

    def _forget(self, key: str | None, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        if key is not None and self._tails.get(key) is task:
            del self._tails[key]

    async def aclose(self) -> None:
        tasks = list(self._running)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with suppress(asyncio.CancelledError):
                await task
