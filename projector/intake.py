"""The projector's intake: every message of the streams a partition reads, handed to its
dispatcher in each stream's order as it arrives.

Why not FastStream's pull subscriber: it runs the messages of one fetched batch as
concurrent tasks, which reorders messages of one workflow (measured: a quarter of them at
batch size 64), and with a batch of one it costs a round trip per message. So the projector
pulls continuously and in order itself (`messaging.pull`), on the connection of its
FastStream broker, which still owns connecting, publishing dead letters and shutting down.

One partition reads the inbound stream; one of several also reads its own stream of keyed
messages, both into the one dispatcher, so a workflow's messages wait in one line whichever
stream brought them.
"""

from __future__ import annotations

import asyncio

from nats.aio.client import Client

from interlock.contracts import subjects
from interlock.contracts.partitions import Partition
from interlock.messaging.partition_streams import streams_of
from interlock.messaging.progress import Progress
from interlock.messaging.pull import PullConsumer
from interlock.projector.dispatch import KeyedDispatcher

PULL_BATCH = 256


async def intake(
    nc: Client,
    dispatcher: KeyedDispatcher,
    stop: asyncio.Event,
    partition: Partition,
    progress: Progress | None = None,
) -> None:
    """Fetch from every stream `partition` reads until `stop` is set."""
    async with asyncio.TaskGroup() as group:
        for stream in streams_of(partition.index, partition.count):
            group.create_task(
                fetch_in_order(nc, dispatcher, stop, progress, partition.consumer, stream=stream)
            )


async def fetch_in_order(
    nc: Client,
    dispatcher: KeyedDispatcher,
    stop: asyncio.Event,
    progress: Progress | None = None,
    durable: str = subjects.CONSUMER_PROJECTOR,
    *,
    stream: str = subjects.STREAM_IN,
) -> None:
    """Hand every message of `stream` to the dispatcher in stream order, as it arrives."""
    consumer = PullConsumer(
        nc,
        stream,
        durable,
        batch=PULL_BATCH,
        expires=2.0,
        progress=progress,
    )
    async for msg in consumer.messages(stop):
        await dispatcher.submit(msg)
