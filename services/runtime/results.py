"""A job's one result: built from the job (its event id derives from the job id, so a job run
twice yields the same event) and submitted: asked to be decided at once by the projector
partition that owns the workflow (`asking`), else published on its inbound subject.
"""

from __future__ import annotations

from datetime import datetime

from faststream.nats import NatsBroker
from opentelemetry import trace

from interlock.contracts import subjects
from interlock.contracts.envelope import Envelope, utcnow, workflow_id_of
from interlock.contracts.ids import result_event_id
from interlock.contracts.jobs import JobPayload
from interlock.contracts.partitions import routing_key, slot_of
from interlock.contracts.result_requests import result_request
from interlock.otel.messaging import publishing
from interlock.services.runtime.asking import ASKING
from interlock.services.runtime.worker import StageResult, StageWorker

tracer = trace.get_tracer("interlock.stage")


def result_event(
    stage: StageWorker,
    job_envelope: Envelope,
    job: JobPayload,
    result: StageResult,
    occurred_at: datetime | None = None,
) -> Envelope:
    """The job's one result event: its id derives from the job id, so a job run twice yields
    the same event."""
    return Envelope(
        event_id=result_event_id(job.job_id),
        type=result.event_type,
        workflow_type=job_envelope.workflow_type,
        workflow_id=job_envelope.workflow_id,
        tenant_id=job_envelope.tenant_id,
        actor=stage.actor,
        causation_id=job.job_id,
        correlation_id=job_envelope.correlation_id,
        occurred_at=occurred_at or utcnow(),
        payload=dict(result.payload),
    )


async def submit(
    broker: NatsBroker,
    stage: StageWorker,
    job_envelope: Envelope,
    job: JobPayload,
    result: StageResult,
) -> None:
    """Submit the job's one result event (its id derives from the job id): asked to be decided
    at once by the partition that owns its workflow (`asking`), else published on its
    inbound subject under the message id the projector sealed into the job
    (`JobPayload.reply_id`), which no client can spend."""
    event = result_event(stage, job_envelope, job, result)
    key = routing_key(job_envelope.tenant_id, workflow_id_of(job_envelope))
    wf_type, body = job_envelope.workflow_type, event.to_bytes()
    subject = subjects.result(wf_type, stage.name, key)
    message_id = job.reply_id or event.event_id
    headers = {subjects.HEADER_MSG_ID: message_id}
    span = publishing(
        tracer, subject, headers, message_id=message_id, template=subjects.template(subject)
    )
    try:
        asked = result_request(slot_of(key), wf_type, key, stage.name)
        if await ASKING.decided(broker.connection, asked, body, headers):
            span.set_attribute("interlock.decided_on_request", True)
            return
        # Acknowledged by whichever inbound stream holds its slot (the partition's own).
        await broker.connection.jetstream().publish(subject, body, headers=headers)
    finally:
        span.end()
