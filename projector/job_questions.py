"""Answering the stages' job questions (`contracts.job_questions`): does the workflow still
wait for this job? The answer is read from the committed state, one question at a time per
subscription (so a burst of questions queues in the client, bounded, and never holds a
decision's slot). A question that does not hold together, or one asked while the store is
unreachable, is not answered: the stage then does not know, and an effect waits."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress

from nats.aio.client import Client
from nats.aio.msg import Msg

from interlock.contracts import job_questions
from interlock.contracts.errors import MalformedMessage, described
from interlock.contracts.partitions import Partition

log = logging.getLogger("interlock.projector")
OpenJobs = Callable[[str, str, str], Awaitable[dict[str, str] | None]]
"""(tenant id, workflow id, workflow type) -> the open jobs (job id -> stage), None: no such
workflow (`Projector.open_jobs`)."""


async def answer_questions(
    nc: Client, open_jobs: OpenJobs, stop: asyncio.Event, partition: Partition
) -> None:
    """Answer every job question of `partition`'s slots until `stop`."""

    async def answer(request: Msg) -> None:
        if not request.reply:
            return
        try:
            workflow_type, stage, question = job_questions.asked_about(
                request.subject, request.data, partition
            )
        except MalformedMessage as exc:
            log.warning("job question not answered: %s (%s)", exc.reason, exc.detail)
            return
        try:
            jobs = await open_jobs(question.tenant_id, question.workflow_id, workflow_type)
        except Exception as exc:  # the stage asks again, or does the work, as it must
            log.warning("job question not answered: %s", described(exc))
            return
        status = "missing" if jobs is None else job_questions.status_of(jobs, stage, question)
        with suppress(Exception):  # a stage that went away asks again, or not at all
            await request.respond(status.encode())

    subscriptions = [
        await nc.subscribe(subject, queue=job_questions.QUESTION_QUEUE, cb=answer)
        for subject in job_questions.partition_questions(partition)
    ]
    try:
        await stop.wait()
    finally:
        for subscription in subscriptions:
            with suppress(Exception):  # the connection may be closing already
                await subscription.unsubscribe()
