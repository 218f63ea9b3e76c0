"""Keyed dispatch: concurrent across workflows, sequential within one workflow.

Messages arrive in stream order and are queued by a hash of their workflow id onto one of
`workers` queues, each drained by one task, so the messages of one workflow are decided in
the order the stream holds them.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Awaitable, Callable
from contextlib import suppress

from nats.aio.msg import Msg

from interlock.contracts.envelope import Envelope, parse_envelope, workflow_id_of
from interlock.contracts.errors import MalformedMessage

log = logging.getLogger("interlock.projector")
Parsed = tuple[Msg, Envelope | MalformedMessage]
QUEUE_DEPTH = 64


def key_of(event: Envelope | MalformedMessage) -> str:
    """The workflow a message belongs to (a request's id is derived if not given)."""
    return "" if isinstance(event, MalformedMessage) else workflow_id_of(event)


class KeyedDispatcher:
    def __init__(self, handle: Callable[[Parsed], Awaitable[None]], workers: int) -> None:
        self._handle = handle
        self._queues: list[asyncio.Queue[Parsed]] = [
            asyncio.Queue(maxsize=QUEUE_DEPTH) for _ in range(workers)
        ]
        self._tasks: list[asyncio.Task[None]] = []

    async def submit(self, msg: Msg) -> None:
        """Queue `msg` behind earlier messages of its workflow (waits if that queue is full)."""
        try:
            event: Envelope | MalformedMessage = parse_envelope(msg.data)
        except MalformedMessage as exc:
            event = exc
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._drain(q)) for q in self._queues]
        index = zlib.crc32(key_of(event).encode()) % len(self._queues)
        await self._queues[index].put((msg, event))

    async def _drain(self, queue: asyncio.Queue[Parsed]) -> None:
        while True:
            parsed = await queue.get()
            try:
                await self._handle(parsed)
            except Exception:  # never let one message kill the worker; it is redelivered
                log.exception("unexpected failure deciding %s", parsed[0].subject)

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with suppress(asyncio.CancelledError):
                await task
