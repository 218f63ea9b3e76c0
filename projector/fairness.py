"""Decision slots shared fairly between senders.

The projector decides at most a fixed number of messages at a time. Handed out first come,
first served, those slots belong to whoever sends most: a client that floods the inbound
stream (even with messages that are only refused) puts every other tenant's next step, and
every stage's result, behind its whole backlog. So waiting messages queue per sender (a
client, a stage, the timer service, a webhook sender behind the gateway) and a freed slot
goes to the next sender in turn, round robin: a sender with one message waiting waits for
at most one message of each other sender, however many those hold.

Only the order among messages already fetched changes. The same turns order each workflow's
line (`Line`, used by the dispatcher): one sender's messages to a workflow in stream order,
the senders in turn.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from nats.aio.msg import Msg

from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.subjects import parse_inbound
from interlock.projector.parking import sender

T = TypeVar("T")


def turn_of(raw: Msg, event: Envelope | MalformedMessage) -> str:
    """Whose turn a message waits for: its client, stage or the timer service, or the webhook
    sender behind the gateway; one turn for every message with an unreadable subject."""
    try:
        inbound = parse_inbound(raw.subject)
    except MalformedMessage:
        return "?"
    return sender(inbound, event.event_id if isinstance(event, Envelope) else None)


class Line(Generic[T]):
    """Items queued by sender, taken round robin: each sender's own items in the order they
    were put, the senders in turn (the one served goes to the back of the turn)."""

    def __init__(self) -> None:
        self._queues: dict[str, deque[T]] = {}
        """Senders with items, in turn order (the first is served next)."""

    def put(self, sender: str, item: T, ahead_of: Callable[[T], bool] | None = None) -> None:
        """Queue `item` behind `sender`'s others, or ahead of the first for which `ahead_of`
        holds."""
        queue = self._queues.setdefault(sender, deque())
        if ahead_of is not None:
            for index, queued in enumerate(queue):
                if ahead_of(queued):
                    queue.insert(index, item)
                    return
        queue.append(item)

    def take(self) -> T:
        """The next item in turn (IndexError when empty)."""
        sender = next(iter(self._queues), None)
        if sender is None:
            raise IndexError("take from an empty line")
        queue = self._queues.pop(sender)
        item = queue.popleft()
        if queue:
            self._queues[sender] = queue
        return item

    def remove(self, sender: str, item: T) -> None:
        """Withdraw `item` of `sender`, if it is still queued."""
        queue = self._queues.get(sender)
        if queue is None or item not in queue:
            return
        queue.remove(item)
        if not queue:
            del self._queues[sender]

    def waiting(self, sender: str | None = None) -> list[T]:
        """The items queued (of `sender`, or of every sender)."""
        if sender is not None:
            return list(self._queues.get(sender, ()))
        return [item for queue in self._queues.values() for item in queue]

    def __bool__(self) -> bool:
        return bool(self._queues)


class FairSlots:
    """At most `limit` holders at once; waiters served round robin by sender."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("a dispatcher needs at least one slot")
        self._free = limit
        self._waiting: Line[asyncio.Future[None]] = Line()

    async def acquire(self, sender: str) -> None:
        if self._free and not self._waiting:
            self._free -= 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.put(sender, granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.release()  # handed a slot as it was cancelled: pass it on
            else:
                self._waiting.remove(sender, granted)
            raise

    def release(self) -> None:
        """Give the slot to the sender whose turn it is (then to the back of the turn), or
        keep it free when nobody waits."""
        while self._waiting:
            granted = self._waiting.take()
            if not granted.done():
                granted.set_result(None)
                return
        self._free += 1

    def waiting(self, sender: str) -> int:
        """How many of `sender`'s messages wait for a slot."""
        return len(self._waiting.waiting(sender))
