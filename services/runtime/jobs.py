"""Running the jobs of one stage: pulled continuously from its durable consumer, at most
`workers` at a time (and beside them, a bounded number whose result waits for the
projector's answer, `Worked`).

Jobs are independent of one another (each is for one state version of one workflow, and
the projector refuses a result for any other), so they run concurrently, in no particular
order. At most `workers` jobs are requested from the server or being worked on at once
(`PullConsumer(held=True)`): a job is never left waiting in the process while its ack
wait runs out, and a second instance of the stage gets the jobs this one cannot take.

Why not FastStream's pull subscriber: one pull request per message and its per-message
dispatch cost ~0.5 ms of CPU per job, against ~0.04 ms here (issue 22). The broker still
owns connecting, publishing and shutting down; the pulls use its connection (and so the
inbox prefix its NATS user may subscribe to).

On `stop` no new job is taken; running jobs get `grace` seconds to finish, then are
cancelled (a cancelled job is redelivered after its ack wait; its result, if it got as far
as submitting one, is deduplicated by its message id).
"""

from __future__ import annotations

import asyncio
import logging
import traceback
from collections.abc import Awaitable, Callable
from contextlib import aclosing

from nats.aio.client import Client
from nats.aio.msg import Msg

from interlock.contracts import subjects
from interlock.messaging.progress import Progress
from interlock.messaging.pull import PullConsumer

log = logging.getLogger("interlock.stage")
Worked = Callable[[], None]
"""Called by a job that no longer needs its worker: its work is done and its result waits
for the projector's answer (the job is kept, unacknowledged, until it is settled)."""
Work = Callable[[Msg, Worked], Awaitable[None]]
"""What runs one job and settles it (ack, nak or dead letter)."""
PULL_EXPIRES_S = 5.0
ANSWERS_PER_WORKER = 4
"""Jobs waiting for the projector's answer beside each worker's running one: a job waiting
for its result to be decided holds no worker (up to this many), so a stage does not idle
while the projector decides."""


async def run_jobs(
    nc: Client,
    durable: str,
    work: Work,
    stop: asyncio.Event,
    *,
    workers: int,
    grace: float = 5.0,
    progress: Progress | None = None,
) -> None:
    """Run `work` on every job of the consumer `durable` (stream `JOBS`), `workers` at a
    time, until `stop` is set; then wait up to `grace` seconds for the running ones."""
    consumer = PullConsumer(
        nc,
        subjects.STREAM_JOBS,
        durable,
        batch=workers,
        expires=PULL_EXPIRES_S,
        progress=progress,
        held=True,
    )
    slots = asyncio.Semaphore(workers)  # the bound even if the server sends more than asked
    running: set[asyncio.Task[None]] = set()
    answering = 0

    async def one(msg: Msg) -> None:
        nonlocal answering
        holds = True

        def worked() -> None:
            nonlocal holds, answering
            if holds and answering < ANSWERS_PER_WORKER * workers:
                holds, answering = False, answering + 1
                slots.release()
                consumer.release()

        try:
            await work(msg, worked)
        except Exception as exc:
            _unexpected(msg, exc)
        finally:
            if holds:
                slots.release()
                consumer.release()
            else:
                answering -= 1

    stopping = asyncio.create_task(_wake_on(stop, consumer))
    try:
        async with aclosing(consumer.messages(stop)) as jobs:
            async for msg in jobs:
                await slots.acquire()
                task = asyncio.create_task(one(msg))
                running.add(task)
                task.add_done_callback(running.discard)
    finally:
        stopping.cancel()
        await _finish(running, grace)


async def _wake_on(stop: asyncio.Event, consumer: PullConsumer) -> None:
    await stop.wait()
    consumer.wake()


def _unexpected(msg: Msg, exc: Exception) -> None:
    """A failure outside every path of `work` (a bug): the job is left unsettled, to be
    redelivered after its ack wait. Logged by kind and place, not by message: an exception's
    text may quote the values it was given."""
    frames = "".join(traceback.format_tb(exc.__traceback__))
    log.error("job on %s failed unexpectedly (%s)\n%s", msg.subject, type(exc).__name__, frames)


async def _finish(running: set[asyncio.Task[None]], grace: float) -> None:
    if not running:
        return
    _, late = await asyncio.wait(set(running), timeout=grace)
    for task in late:
        task.cancel()
    if late:
        log.warning("%d job(s) still running after %.1fs: cancelled", len(late), grace)
        await asyncio.wait(late)
