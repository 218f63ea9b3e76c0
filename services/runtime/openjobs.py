"""Asks the projector partition that owns a workflow whether it still waits for a job
(`contracts.job_questions`), so a stage skips a job a committed decision revoked.

The answer is the committed state, so it never lags a decision the way a published record
could: a cancellation committed before the question makes the job `stale`. No answer within
`wait` seconds (no partition up, a reply lost) is `unknown`: an effect waits and asks again,
a read-only stage does the work (a stale result is refused by the projector anyway).
"""

from __future__ import annotations

import logging
from typing import Literal

from nats.aio.client import Client
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout
from opentelemetry import trace

from interlock.contracts.job_questions import ANSWERS, JobQuestion, JobStatus, job_question
from interlock.otel.messaging import client_span

log = logging.getLogger("interlock.stage")
tracer = trace.get_tracer("interlock.stage")
WAIT_S = 2.0
"""How long a stage waits for the answer (well inside its job's ack wait)."""
Known = JobStatus | Literal["unknown"]


class OpenJobsReader:
    def __init__(self, nc: Client, wait: float = WAIT_S) -> None:
        self._nc = nc
        self._wait = wait

    async def status(
        self, workflow_type: str, stage: str, tenant_id: str, workflow_id: str, job_id: str
    ) -> Known:
        """`stale` if the workflow no longer waits for the job (or is no longer there), `open`
        if it still waits, `unknown` if nobody answered."""
        question = JobQuestion(tenant_id=tenant_id, workflow_id=workflow_id, job_id=job_id)
        subject = job_question(workflow_type, stage, question)
        attributes = {"interlock.workflow_type": workflow_type, "interlock.stage": stage}
        with client_span(tracer, "job question", attributes) as span:
            status = await self._ask(subject, question)
            span.set_attribute("interlock.job_status", status)
        return status

    async def _ask(self, subject: str, question: JobQuestion) -> Known:
        try:
            answer = await self._nc.request(
                subject, question.model_dump_json().encode(), timeout=self._wait
            )
        except (NoRespondersError, NatsTimeout, TimeoutError):
            return "unknown"
        status = answer.data.decode(errors="replace")
        if status not in ANSWERS:
            log.warning("unreadable answer to a job question")
            return "unknown"
        return status  # type: ignore[return-value]
