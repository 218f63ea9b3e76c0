"""Keyed dispatch: concurrent across workflows, one at a time within a workflow.

Messages arrive in stream order; each joins its workflow's line (`Line`) and is decided once
the messages ahead of it are, with at most `workers` decisions running at a time. `submit`
never waits: a workflow stuck behind a dependency (its message retried in place) holds back
only its own later messages, never the fetch loop or another workflow. Memory is bounded by
the consumer's `max_ack_pending`, the most the server hands out unacknowledged.
A malformed message has no workflow: it waits in no line, so it never waits for, nor holds
up, any other message; nor does one the projector refuses whatever its workflow's state
(`line_of`, `projector.lines`). Such a message can only end refused, so it is decided in
slots of its own (`aside`, four), never in one a workflow's next step needs: a burst of junk
puts at most four decisions beside the workflows' messages at a time (on one event loop,
twenty concurrent refusals delayed every genuine step behind them by their whole burst); the
rest of the burst waits its turn, kept alive. So is a message back for its workflow after it
waited for it to exist (`aside_of`): mostly signals for workflows nobody will create, each
decided again and again for the unknown-workflow grace; its line keeps its order all the same.

Within a line each sender's messages keep their stream order, and the senders take turns:
a client that puts a thousand messages in front of a workflow's next approval (to be
refused, one decision each) delays that approval by one of its messages, not by all of
them. Messages of different senders waiting together were sent without either seeing the
other decided, so either order is one the senders could have produced.

A message another projector partition decides (`claim` says None) is acknowledged at once;
one routed to this partition's own stream for another partition's workflow is decided as the
`partition_mismatch` `claim` puts in its place (dead-lettered).

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
from dataclasses import dataclass

from nats.aio.msg import Msg

from interlock.contracts.envelope import Envelope, parse_envelope, workflow_id_of
from interlock.contracts.errors import MalformedMessage
from interlock.projector.fairness import FairSlots, Line, turn_of

log = logging.getLogger("interlock.projector")
Parsed = tuple[Msg, Envelope | MalformedMessage]
ASIDE_SLOTS = 4
"""Decisions at a time of messages in no line (they can only be refused): enough to keep up
with the event loop's pace of refusals, few enough to leave it to the workflows."""
KEEP_ALIVE_S = 3.0
"""How often a waiting message is reported in progress; well inside any ack wait."""


LineKey = tuple[str, str]
"""A workflow's line: its tenant and id (workflow ids are unique within a tenant only, so one
tenant's messages never wait in the line of another's workflow of the same id)."""


def key_of(event: Envelope | MalformedMessage) -> LineKey | None:
    """The workflow a message belongs to (a request's id is derived if not given)."""
    if isinstance(event, MalformedMessage):
        return None
    return event.tenant_id, workflow_id_of(event)


@dataclass
class _Held:
    """A message waiting in the process for its workflow to exist."""

    msg: Msg
    resumed: bool = False


async def _in_progress(msg: Msg) -> None:
    with suppress(Exception):  # a lost connection: the message is redelivered
        await msg.in_progress()


async def _acked(msg: Msg) -> None:
    with suppress(Exception):  # a lost connection: redelivered, acked again
        await msg.ack()


def _later_than(msg: Msg) -> Callable[[Parsed], bool]:
    """Whether a queued message came after `msg` in the same stream."""
    stream, sequence = _position(msg)

    def later(queued: Parsed) -> bool:
        other_stream, other_sequence = _position(queued[0])
        return other_stream == stream and other_sequence > sequence

    return later


def _position(msg: Msg) -> tuple[str, int]:
    """The stream a delivered message comes from and its sequence there (("", 0) without)."""
    try:
        return msg.metadata.stream, msg.metadata.sequence.stream
    except Exception:  # not a JetStream delivery
        return "", 0


def _stream_of(msg: Msg) -> str:
    """The stream a delivered message comes from ("" when it carries no JetStream reply)."""
    return _position(msg)[0]


class KeyedDispatcher:
    def __init__(
        self,
        handle: Callable[[Parsed], Awaitable[None]],
        workers: int,
        *,
        aside: int = ASIDE_SLOTS,
        keep_alive: float = KEEP_ALIVE_S,
        claim: Callable[[str, Envelope | MalformedMessage], Envelope | MalformedMessage | None] = (
            lambda _, event: event
        ),
        line_of: Callable[[Msg, Envelope | MalformedMessage], LineKey | None] = (
            lambda _, event: key_of(event)
        ),
        aside_of: Callable[[Msg], bool] = lambda _: False,
    ) -> None:
        self._handle = handle
        self._claim = claim
        self._line_of = line_of
        self._aside_of = aside_of
        self._slots = FairSlots(workers)
        self._aside = FairSlots(aside)
        self._keep_alive = keep_alive
        self._lines: dict[LineKey, Line[Parsed]] = {}
        self._running: set[asyncio.Task[None]] = set()
        self._unfinished = 0
        self._keeper: asyncio.Task[None] | None = None

    async def submit(self, msg: Msg) -> None:
        """Put `msg` in its workflow's line; returns at once (or acks it, if another
        partition decides it)."""
        claimed = self._claimed(msg)
        if claimed is None:
            await _acked(msg)
            return
        self._enter(msg, claimed)

    def _claimed(self, msg: Msg) -> Envelope | MalformedMessage | None:
        try:
            event: Envelope | MalformedMessage = parse_envelope(msg.data)
        except MalformedMessage as exc:
            event = exc
        return self._claim(_stream_of(msg), event)

    def _enter(self, msg: Msg, event: Envelope | MalformedMessage, *, again: bool = False) -> None:
        """Queue `msg` in its line (`again`: a message that waited, decided before any of its
        sender's messages queued there, goes ahead of those its stream holds after it)."""
        parsed: Parsed = (msg, event)
        self._unfinished += 1
        key = self._line_of(msg, event)
        if key is None:
            self._start(self._decide(parsed, self._aside))
            return
        line = self._lines.get(key)
        if line is None:
            line = self._lines[key] = Line()
            self._start(self._serve(key, line))
        line.put(turn_of(msg, event), parsed, ahead_of=_later_than(msg) if again else None)
        if self._keeper is None:
            self._keeper = asyncio.create_task(self._keep_lines_alive())

    @property
    def in_flight(self) -> int:
        """Messages submitted and not yet finished."""
        return self._unfinished

    def _start(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _serve(self, key: LineKey, line: Line[Parsed]) -> None:
        """Decide the line's messages, senders in turn, until it is empty."""
        try:
            while line:
                parsed = line.take()
                slots = self._aside if self._aside_of(parsed[0]) else self._slots
                await self._decide(parsed, slots)
        finally:
            if self._lines.get(key) is line:
                del self._lines[key]

    async def _decide(self, parsed: Parsed, slots: FairSlots) -> None:
        """Decide `parsed` in one of `slots` (the workflows' or the aside ones)."""
        await self._alive_while(parsed[0], slots.acquire(turn_of(*parsed)))
        try:
            await self._handle(parsed)
        except Exception:  # never let one message take the dispatcher down; it is redelivered
            log.exception("unexpected failure deciding %s", parsed[0].subject)
        finally:
            slots.release()
            self._unfinished -= 1

    def hold(self, msg: Msg, delay: float) -> Callable[[], None]:
        """Keep `msg`, decided and waiting for its workflow to exist, alive for `delay`
        seconds, then queue it again; returns what queues it again at once (its workflow was
        just created), in its place among its sender's messages."""
        held = _Held(msg)
        self._start(self._hold(held, delay))
        return lambda: self._resume(held, woken=True)

    def _resume(self, held: _Held, *, woken: bool = False) -> None:
        """Queue the held message again (once); woken early, it is reported in progress
        too, as its hold would have on ending."""
        if held.resumed:
            return
        held.resumed = True
        if woken:
            self._start(_in_progress(held.msg))
        claimed = self._claimed(held.msg)
        if claimed is None:  # cannot happen (it was claimed before, and claims do not change)
            self._start(_acked(held.msg))
            return
        self._enter(held.msg, claimed, again=True)

    async def _hold(self, held: _Held, delay: float) -> None:
        """Report the message in progress when its hold starts, every `keep_alive` seconds
        and when it ends (a hold follows a decision and may follow a wait for a slot: none
        of them may use up the ack wait), then queue it again."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + delay
        while not held.resumed:
            await _in_progress(held.msg)
            left = deadline - loop.time()
            if left <= 0:
                break
            await asyncio.sleep(min(left, self._keep_alive))
        self._resume(held)

    async def _alive_while(self, msg: Msg, waiting: Awaitable[object]) -> None:
        future = asyncio.ensure_future(waiting)
        while True:
            done, _ = await asyncio.wait({future}, timeout=self._keep_alive)
            if done:
                future.result()
                return
            with suppress(Exception):  # a lost connection: the message is redelivered
                await msg.in_progress()

    async def _keep_lines_alive(self) -> None:
        """Report every message waiting in a line in progress, every `keep_alive` seconds."""
        while True:
            await asyncio.sleep(self._keep_alive)
            for line in list(self._lines.values()):
                for msg, _ in line.waiting():
                    with suppress(Exception):  # a lost connection: the message is redelivered
                        await msg.in_progress()

    async def aclose(self) -> None:
        tasks = list(self._running) + ([self._keeper] if self._keeper else [])
        for task in tasks:
            task.cancel()
        for task in tasks:
            with suppress(asyncio.CancelledError):
                await task
