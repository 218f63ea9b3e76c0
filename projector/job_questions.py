"""Answering the stages' job questions (`contracts.job_questions`): does the workflow still
wait for this job? The answer is read from the committed state (one narrow query, the job's
stage if the workflow lists it open), at most `ANSWERING` at a time for the whole partition,
so questions never take more than that of the database pool the decisions share. What waits
beyond `PENDING` questions is dropped by the client (the stage hears nothing and asks again
later). A question that does not hold together, or one asked while the store is unreachable,
is not answered: the stage then does not know, and an effect waits."""

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
from interlock.messaging.answering import serving

log = logging.getLogger("interlock.projector")
JobStage = Callable[[str, str, str, str], Awaitable[str | None]]
"""(tenant id, workflow id, workflow type, job id) -> the stage the workflow lists the job
open for, None if it does not (`Projector.job_stage`)."""
ANSWERING = 2
"""Questions a partition answers at once."""
PENDING = 256
"""Questions a subscription holds unanswered before the client drops the next ones."""


async def answer_questions(
    nc: Client, job_stage: JobStage, stop: asyncio.Event, partition: Partition
) -> None:
    """Answer every job question of `partition`'s slots until `stop`."""
    answering = asyncio.Semaphore(ANSWERING)

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
            async with answering:
                listed_for = await job_stage(
                    question.tenant_id, question.workflow_id, workflow_type, question.job_id
                )
        except Exception as exc:  # the stage asks again, or does the work, as it must
            log.warning("job question not answered: %s", described(exc))
            return
        status = job_questions.status_of(listed_for, stage)
        with suppress(Exception):  # a stage that went away asks again, or not at all
            await request.respond(status.encode())

    await serving(
        nc,
        job_questions.partition_questions(partition),
        answer,
        stop,
        queue=job_questions.QUESTION_QUEUE,
        pending=PENDING,
        pending_bytes=PENDING * job_questions.MAX_QUESTION_BYTES,
    )
