"""The stage's job loop (`services.runtime.jobs`): at most `workers` jobs requested or
running at once, a nak'd job comes back, a broken job frees its slot, and `stop` ends it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import nats
import pytest
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js.api import StreamConfig

from interlock.contracts import subjects
from interlock.messaging.deadletter import deliveries
from interlock.messaging.streams import stage_consumer
from interlock.services.runtime.jobs import ANSWERS_PER_WORKER, Work, Worked, run_jobs
from tests.support.waiting import until

TYPE, STAGE = "t", "s"
DURABLE = subjects.stage_consumer(TYPE, STAGE)


@pytest.fixture
async def nc(nats_url: str) -> AsyncIterator[Client]:
    client = await nats.connect(nats_url)
    js = client.jetstream()
    await js.add_stream(StreamConfig(name=subjects.STREAM_JOBS, subjects=["wf.job.>"]))
    await js.add_consumer(subjects.STREAM_JOBS, stage_consumer(TYPE, STAGE))
    yield client
    await client.close()


async def _publish(nc: Client, count: int) -> None:
    for i in range(count):
        await nc.jetstream().publish(subjects.job(TYPE, STAGE), str(i).encode())


def _running(
    nc: Client, work: Work, stop: asyncio.Event, *, workers: int = 3, grace: float = 5.0
) -> asyncio.Task[None]:
    return asyncio.create_task(run_jobs(nc, DURABLE, work, stop, workers=workers, grace=grace))


async def _ack_pending(nc: Client) -> int:
    info = await nc.jetstream().consumer_info(subjects.STREAM_JOBS, DURABLE)
    return int(info.num_ack_pending or 0)


async def test_no_more_jobs_than_workers_are_taken_from_the_server(nc: Client) -> None:
    """Jobs beyond the workers stay in the server (for another instance, with their ack
    wait not yet running), not in this process."""
    await _publish(nc, 10)
    gate, stop, active, most, done = asyncio.Event(), asyncio.Event(), [0], [0], []

    async def work(msg: Msg, _worked: Worked) -> None:
        active[0] += 1
        most[0] = max(most[0], active[0])
        await gate.wait()
        active[0] -= 1
        await msg.ack()
        done.append(msg.data)

    task = _running(nc, work, stop, workers=3)
    await until(lambda: asyncio.sleep(0, active[0]), lambda n: n == 3)
    await nc.flush()  # the loop's pull requests (on this connection) have reached the server
    info = await nc.jetstream().consumer_info(subjects.STREAM_JOBS, DURABLE)
    assert (info.num_ack_pending, info.num_pending) == (3, 7)

    gate.set()
    await until(lambda: asyncio.sleep(0, len(done)), lambda n: n == 10)
    stop.set()
    await asyncio.wait_for(task, 5)

    assert most[0] == 3
    assert sorted(done) == sorted(str(i).encode() for i in range(10))


async def test_a_job_waiting_for_its_answer_frees_its_worker_within_a_bound(
    nc: Client,
) -> None:
    """A job whose work is done (its result waiting for the projector's answer) holds no
    worker: the next job runs meanwhile, up to ANSWERS_PER_WORKER waiting per worker."""
    await _publish(nc, 10)
    answers, stop, waiting, done = asyncio.Event(), asyncio.Event(), [0], []

    async def work(msg: Msg, worked: Worked) -> None:
        worked()  # the work is done: the result waits for its answer
        waiting[0] += 1
        await answers.wait()
        await msg.ack()
        done.append(msg.data)

    task = _running(nc, work, stop, workers=1)
    bound = ANSWERS_PER_WORKER * 1
    # One worker, yet `bound` jobs wait for their answers, and one more holds the worker.
    await until(lambda: asyncio.sleep(0, waiting[0]), lambda n: n == bound + 1)
    await nc.flush()
    assert await _ack_pending(nc) == bound + 1

    answers.set()
    await until(lambda: asyncio.sleep(0, len(done)), lambda n: n == 10)
    stop.set()
    await asyncio.wait_for(task, 5)
    assert sorted(done) == sorted(str(i).encode() for i in range(10))


async def test_a_nakd_job_is_delivered_again(nc: Client) -> None:
    await _publish(nc, 1)
    stop, seen = asyncio.Event(), []

    async def work(msg: Msg, _worked: Worked) -> None:
        seen.append(deliveries(msg))
        await (msg.nak() if deliveries(msg) == 1 else msg.ack())

    task = _running(nc, work, stop)
    await until(lambda: asyncio.sleep(0, list(seen)), lambda s: s == [1, 2])
    stop.set()
    await asyncio.wait_for(task, 5)

    assert await _ack_pending(nc) == 0


async def test_a_job_that_breaks_frees_its_worker_and_stays_unacknowledged(nc: Client) -> None:
    await _publish(nc, 4)
    stop, acked = asyncio.Event(), []

    async def work(msg: Msg, _worked: Worked) -> None:
        if msg.data == b"0":
            raise RuntimeError("a bug")
        await msg.ack()
        acked.append(msg.data)

    task = _running(nc, work, stop, workers=1)
    await until(lambda: asyncio.sleep(0, sorted(acked)), lambda a: a == [b"1", b"2", b"3"])
    stop.set()
    await asyncio.wait_for(task, 5)

    assert await _ack_pending(nc) == 1  # redelivered after its ack wait


async def test_stop_lets_running_jobs_finish_then_cancels_the_late_ones(nc: Client) -> None:
    await _publish(nc, 2)
    stop, started, finished, cancelled = asyncio.Event(), [], [], []

    async def work(msg: Msg, _worked: Worked) -> None:
        started.append(msg.data)
        try:
            await asyncio.sleep(0.2 if msg.data == b"0" else 60)  # a short and a hung job
        except asyncio.CancelledError:
            cancelled.append(msg.data)
            raise
        await msg.ack()
        finished.append(msg.data)

    task = _running(nc, work, stop, workers=2, grace=1.0)
    await until(lambda: asyncio.sleep(0, len(started)), lambda n: n == 2)
    stop.set()
    await asyncio.wait_for(task, 5)

    assert (finished, cancelled) == ([b"0"], [b"1"])
    await _publish(nc, 1)
    await nc.flush()
    info = await nc.jetstream().consumer_info(subjects.STREAM_JOBS, DURABLE)
    assert (info.num_pending, info.num_ack_pending) == (1, 1)  # nothing taken after stop


async def test_jobs_are_pulled_into_the_connections_own_inbox_prefix(
    nc: Client, nats_url: str
) -> None:
    """The only inbox a stage's NATS user may subscribe to is its own prefix's."""
    prefix = subjects.inbox_prefix("stage-t-s")
    requests: list[str] = []

    async def seen(msg: Msg) -> None:
        requests.append(msg.reply)

    await nc.subscribe(f"$JS.API.CONSUMER.MSG.NEXT.{subjects.STREAM_JOBS}.{DURABLE}", cb=seen)
    await nc.flush()
    stage_nc = await nats.connect(nats_url, inbox_prefix=prefix)
    stop = asyncio.Event()

    async def work(msg: Msg, _worked: Worked) -> None:
        await msg.ack()

    task = _running(stage_nc, work, stop)
    try:
        await until(lambda: asyncio.sleep(0, list(requests)), bool)
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        await stage_nc.close()

    assert all(reply.startswith(f"{prefix}.") for reply in requests)
