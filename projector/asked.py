"""Results a stage asks the projector to decide at once (`contracts.result_requests`).

A partition subscribes to its slots' request subjects, in one queue group, and hands each
request to the same dispatcher as its streams' messages, in the guise of a delivery (`Asked`)
of the mapped inbound subject it stands for, from the partition's own stream: so it waits in
its workflow's line, is claimed, checked at the door and decided exactly like the result
would be had it come through the stream. Settling it answers the stage instead of the
broker: an ack (decided: committed, refused and recorded, or a duplicate) answers `decided`;
anything else answers `not_taken`, and the consumer does nothing more with it (`is_asked`):
no dead letter, no audit, no waiting for a workflow or a dependency, because the stage then
publishes the same result on the durable path, where all of that happens as before.

A request's answer is sent only after its decision committed, so a lost answer, a crash
before it or a request no partition heard is only a result sent again: its event id derives
from the job, and the second copy is acknowledged as a duplicate.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime

from nats.aio.client import Client
from nats.aio.msg import Msg

from interlock.contracts import result_requests, subjects
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.partitions import Partition
from interlock.messaging.answering import serving
from interlock.projector.dispatch import KeyedDispatcher

MAX_WAITING = 512
"""Result requests a partition holds undecided at once; beyond them it answers `not_taken`
at once (the stream, bounded by its consumer's limit, takes the rest)."""
_UNSEQUENCED = Msg.Metadata.SequencePair(consumer=0, stream=0)


def _nothing() -> None:
    pass


class Asked(Msg):
    """A result request, shaped as a delivery of the inbound subject it stands for from
    `stream` (the partition's own): the dispatcher and the consumer take it as one."""

    def __init__(
        self, request: Msg, subject: str, stream: str, answered: Callable[[], None] = _nothing
    ) -> None:
        super().__init__(
            _client=request._client,
            subject=subject,
            reply=request.reply,
            data=request.data,
            headers=request.headers,
        )
        self._metadata = Msg.Metadata(
            sequence=_UNSEQUENCED,
            num_pending=0,
            num_delivered=1,
            timestamp=datetime.now(UTC),
            stream=stream,
            consumer="",
        )
        self.answer: bytes | None = None
        """What the stage was told (None: nothing yet)."""
        self._answered = answered

    async def ack(self) -> None:
        await self._answer(result_requests.DECIDED)

    async def nak(self, delay: float | None = None) -> None:
        await self._answer(result_requests.NOT_TAKEN)

    async def term(self) -> None:
        await self._answer(result_requests.NOT_TAKEN)

    async def in_progress(self) -> None:
        """Nothing to keep alive: the stage waits for the answer, its job kept alive."""

    async def _answer(self, outcome: bytes) -> None:
        if self.answer is not None:
            return
        self.answer = outcome
        self._answered()
        if self.reply:
            await self._client.publish(self.reply, outcome)


def is_asked(raw: Msg) -> bool:
    """Whether `raw` is a result request (settled by answering, never dead-lettered)."""
    return isinstance(raw, Asked)


async def take_requests(
    nc: Client, dispatcher: KeyedDispatcher, stop: asyncio.Event, partition: Partition
) -> None:
    """Hand every result request of `partition`'s slots to `dispatcher` until `stop`."""
    stream = partition.stream or subjects.STREAM_IN
    waiting = 0

    def answered() -> None:
        nonlocal waiting
        waiting -= 1

    async def hand_on(request: Msg) -> None:
        nonlocal waiting
        try:
            subject = result_requests.as_inbound(request.subject)
        except MalformedMessage:
            subject = None
        if subject is None or waiting >= MAX_WAITING or not request.reply:
            with suppress(Exception):  # the stage takes the durable path either way
                await request.respond(result_requests.NOT_TAKEN)
            return
        waiting += 1
        await dispatcher.submit(Asked(request, subject, stream, answered))

    await serving(
        nc,
        result_requests.partition_requests(partition),
        hand_on,
        stop,
        queue=result_requests.QUEUE,
    )
