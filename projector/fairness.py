"""Decision slots shared fairly between senders.

The projector decides at most a fixed number of messages at a time. Handed out first come,
first served, those slots belong to whoever sends most: a client that floods the inbound
stream (even with messages that are only refused) puts every other tenant's next step, and
every stage's result, behind its whole backlog. So waiting messages queue per sender (a
client, a stage, the timer service, a webhook sender behind the gateway) and a freed slot
goes to the next sender in turn, round robin: a sender with one message waiting waits for
at most one message of each other sender, however many those hold.

Only the order among messages already fetched changes; each workflow's own messages are
still decided in stream order (the dispatcher chains them before they ask for a slot).
"""

from __future__ import annotations

import asyncio
from collections import deque

from nats.aio.msg import Msg

from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.subjects import parse_inbound
from interlock.projector.parking import sender


def turn_of(raw: Msg, event: Envelope | MalformedMessage) -> str:
    """Whose turn a message waits for: its client, stage or the timer service, or the webhook
    sender behind the gateway; one turn for every message with an unreadable subject."""
    try:
        inbound = parse_inbound(raw.subject)
    except MalformedMessage:
        return "?"
    return sender(inbound, event.event_id if isinstance(event, Envelope) else None)


class FairSlots:
    """At most `limit` holders at once; waiters served round robin by sender."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("a dispatcher needs at least one slot")
        self._free = limit
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}
        """Senders with waiters, in turn order (the first is served next)."""

    async def acquire(self, sender: str) -> None:
        if self._free and not self._waiting:
            self._free -= 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(sender, deque()).append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.release()  # handed a slot as it was cancelled: pass it on
            else:
                self._withdraw(sender, granted)
            raise

    def release(self) -> None:
        """Give the slot to the sender whose turn it is (then to the back of the turn), or
        keep it free when nobody waits."""
        while self._waiting:
            sender = next(iter(self._waiting))
            queue = self._waiting.pop(sender)
            granted = queue.popleft()
            if queue:
                self._waiting[sender] = queue
            if not granted.done():
                granted.set_result(None)
                return
        self._free += 1

    def waiting(self, sender: str) -> int:
        """How many of `sender`'s messages wait for a slot."""
        return len(self._waiting.get(sender, ()))

    def _withdraw(self, sender: str, granted: asyncio.Future[None]) -> None:
        queue = self._waiting.get(sender)
        if queue is None:
            return
        try:
            queue.remove(granted)
        except ValueError:
            return
        if not queue:
            del self._waiting[sender]
