"""A continuous pull consumer: messages are handed on the moment they arrive, in order.

It keeps up to `batch` messages requested from a durable pull consumer at all times (one
lingering pull request, topped up as messages arrive), the pattern of the official clients'
`Consume`. The request-per-fetch loop of nats-py's `fetch(n)` instead waits for a batch to
fill or its deadline to pass, which adds that deadline to every hop of a quiet workflow.

With `held=True` a message handed on counts against `batch` until the caller `release`s it
(it has been settled), so no more than `batch` messages are ever requested or worked on at
once: none waits in the process, unattended, while its ack wait runs out.

Guarantees: messages are yielded in the order the server delivers them (stream order for a
single consumer instance); nothing is acked here — the caller acks, naks or terminates each
message it is handed (held messages that arrived but were never handed on are naked at
stop). A lost pull request (reconnect, server restart) is re-issued after `expires`. The
pull requests reply to an inbox under the connection's inbox prefix (`nc.new_inbox()`), the
only one its NATS user may subscribe to.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncGenerator
from contextlib import suppress

from nats.aio.client import Client
from nats.aio.msg import Msg

from interlock.messaging.progress import Progress

log = logging.getLogger("interlock.pull")
_STATUS = "Status"
_PENDING = "Nats-Pending-Messages"
# Statuses that end a pull request: no messages / request timeout / conflict (e.g. max
# waiting reached, consumer deleted, leadership change).
_ENDING = {"404", "408", "409"}


class PullConsumer:
    def __init__(
        self,
        nc: Client,
        stream: str,
        durable: str,
        *,
        batch: int = 64,
        expires: float = 5.0,
        progress: Progress | None = None,
        held: bool = False,
    ) -> None:
        self._nc = nc
        self._progress = progress
        self._subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self._batch = batch
        self._expires = expires
        self._outstanding = 0
        self._held: int | None = 0 if held else None
        # Held messages top up one at a time (a free worker is never left idle); others in
        # halves of `batch` (fewer requests for a consumer that keeps many in flight).
        self._refill = 1 if held else max(1, batch // 2)
        self._queue: asyncio.Queue[Msg | None] = asyncio.Queue()

    def release(self) -> None:
        """One message handed on (with `held=True`) is settled: another may be requested."""
        if self._held is not None:
            self._held = max(0, self._held - 1)
            self.wake()  # to ask for one more

    def wake(self) -> None:
        """Have `messages` look at its stop event (and top up) now rather than in a while."""
        self._queue.put_nowait(None)

    async def messages(self, stop: asyncio.Event) -> AsyncGenerator[Msg, None]:
        """Yield messages until `stop` is set (noticed within `expires` / 4)."""
        inbox = self._nc.new_inbox()
        queue = self._queue

        async def deliver(msg: Msg) -> None:
            queue.put_nowait(msg)

        subscription = await self._nc.subscribe(
            inbox, cb=deliver, pending_msgs_limit=-1, pending_bytes_limit=-1
        )
        loop = asyncio.get_running_loop()
        heard = loop.time()
        try:
            await self._top_up(inbox)
            while not stop.is_set():
                try:
                    msg = await _next(queue, self._expires / 4)
                except TimeoutError:
                    # Requests end with a status when they expire; silence for longer than
                    # that means they were lost (a reconnect): ask again.
                    await self._top_up(inbox, lost=loop.time() - heard > self._expires + 1)
                    continue
                if msg is None:  # woken: released, or stopping
                    await self._top_up(inbox)
                    continue
                heard = loop.time()
                if self._progress is not None:
                    self._progress.advanced()  # the server answered: a message or a status
                if msg.reply and msg.reply.startswith("$JS.ACK."):
                    self._outstanding = max(0, self._outstanding - 1)
                    if self._held is not None:
                        self._held += 1
                    yield msg
                else:
                    await self._on_status(msg)
                await self._top_up(inbox)
        finally:
            await subscription.unsubscribe()
            if self._held is not None:
                await _hand_back(queue)

    async def _on_status(self, msg: Msg) -> None:
        headers = msg.headers or {}
        status = headers.get(_STATUS)
        if status in _ENDING:
            pending = int(headers.get(_PENDING, self._outstanding))
            self._outstanding = max(0, self._outstanding - pending)
        if status == "409":
            log.warning("pull request refused: %s", headers.get("Description", status))
            await asyncio.sleep(1.0)  # e.g. the consumer is being recreated: don't spin

    async def _top_up(self, inbox: str, *, lost: bool = False) -> None:
        """Keep `batch` messages requested or held; `lost` forgets requests that never ended."""
        if lost:
            self._outstanding = 0
        wanted = self._batch - self._outstanding - (self._held or 0)
        if wanted < self._refill:
            return
        request = {"batch": wanted, "expires": int(self._expires * 1e9)}
        await self._nc.publish(self._subject, json.dumps(request).encode(), reply=inbox)
        self._outstanding += wanted


async def _next(queue: asyncio.Queue[Msg | None], within: float) -> Msg | None:
    """The next message queued, at once when one is (a burst costs no timer and no task per
    message), else one arriving within `within` seconds (`TimeoutError` if none does)."""
    try:
        return queue.get_nowait()
    except asyncio.QueueEmpty:
        async with asyncio.timeout(within):
            return await queue.get()


async def _hand_back(queue: asyncio.Queue[Msg | None]) -> None:
    """Nak what arrived but was never handed on, so it is redelivered now rather than after
    its ack wait (best effort: a nak that cannot be sent changes nothing). Only for held
    (independent) messages: an ordered consumer's message redelivered at once could be
    decided elsewhere before the one ahead of it, still being finished here."""
    while not queue.empty():
        msg = queue.get_nowait()
        if msg is not None and msg.reply and msg.reply.startswith("$JS.ACK."):
            with suppress(Exception):
                await msg.nak()
