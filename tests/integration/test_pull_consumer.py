"""The continuous pull consumer: immediate hand-off, stream order, survives request expiry."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import nats
import pytest
from nats.aio.client import Client
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig

from interlock.messaging.pull import PullConsumer
from tests.support.waiting import until


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[Client]:
    client = await nats.connect(nats_url)
    js = client.jetstream()
    await js.add_stream(StreamConfig(name="PULLTEST", subjects=["pulltest.>"]))
    await js.add_consumer(
        "PULLTEST", ConsumerConfig(durable_name="c", ack_policy=AckPolicy.EXPLICIT)
    )
    yield client
    await client.close()


async def _collect(nc: Client, count: int, *, batch: int, expires: float) -> list[bytes]:
    stop, seen = asyncio.Event(), []
    async for msg in PullConsumer(nc, "PULLTEST", "c", batch=batch, expires=expires).messages(stop):
        seen.append(msg.data)
        await msg.ack()
        if len(seen) == count:
            stop.set()
    return seen


async def test_messages_arrive_in_stream_order(nc: Client) -> None:
    js = nc.jetstream()
    for i in range(500):
        await js.publish("pulltest.x", str(i).encode())

    seen = await asyncio.wait_for(_collect(nc, 500, batch=64, expires=2.0), 20)

    assert seen == [str(i).encode() for i in range(500)]


async def test_a_single_message_is_handed_on_at_once(nc: Client) -> None:
    """No waiting for a batch to fill: one quiet message takes milliseconds, not the
    request's expiry."""
    js = nc.jetstream()

    async def later() -> float:
        # Publish only once the consumer is idle with a lingering pull request.
        await until(lambda: js.consumer_info("PULLTEST", "c"), lambda info: bool(info.num_waiting))
        await js.publish("pulltest.x", b"only")
        return time.monotonic()

    sent = asyncio.create_task(later())
    seen = await asyncio.wait_for(_collect(nc, 1, batch=64, expires=10.0), 20)
    delay = time.monotonic() - await sent

    assert seen == [b"only"]
    assert delay < 0.5


async def test_delivery_continues_after_pull_requests_expire(nc: Client) -> None:
    js = nc.jetstream()

    async def trickle() -> None:
        for i in range(3):
            await asyncio.sleep(0.6)  # longer than a request lives: each must be renewed
            await js.publish("pulltest.x", str(i).encode())

    task = asyncio.create_task(trickle())
    seen = await asyncio.wait_for(_collect(nc, 3, batch=8, expires=0.5), 20)
    await task

    assert seen == [b"0", b"1", b"2"]
