"""Running one stage: consume its jobs, skip stale ones, do the work, submit one result.

Jobs come from the stage's durable consumer through `jobs.run_jobs` (a continuous pull,
`workers` at a time), as raw JetStream messages. Per job, in order:
1. parse the envelope and the job, and verify the projector's signature (malformed, unsigned
   or altered -> dead-letter `wf.dlq.<type>-<stage>`, see `admission`);
2. skip the job if the projector says the workflow no longer waits for it (asked before
   every job of a stage with effects, before a redelivered one of any stage: `admission`);
   an effect's job nobody answered about goes back to the broker with a delay;
3. run the stage handler (a long call, and the wait for the projector's answer after it, keep
   the message alive with `in_progress`);
4. submit exactly one result: asked to be decided at once by the projector partition that
   owns the workflow (`asking`), else published on `wf.in.result.<type>.<key>.<stage>`, keyed
   by its workflow (the only result subjects its NATS user may publish on); its event id is
   derived from the job id, so a redelivered or doubly consumed job, or a result sent both
   ways, yields the same event and is deduplicated;
5. ack.
A handler failure naks with a growing delay (longer when the failing system's `Retry-After`
asks for it); on the last delivery it submits its `exhausted` result (`RETRYABLE_ERROR` where
the state retries durably) or an `ESCALATE`, so the workflow retries or goes to manual review
rather than hanging (`after_failure`, run by `interlock.testing` too). An effect whose
outcome is still unknown escalates as `effect_outcome_unknown` with its idempotency key. A
broker that is down is waited out in place (`messaging.patience`), the job kept alive.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

from faststream.nats import NatsBroker
from nats.aio.msg import Msg
from opentelemetry import trace
from pydantic import ValidationError

from interlock.contracts import subjects
from interlock.contracts.envelope import (
    Envelope,
    parse_envelope,
    summarise,
)
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.jobs import JobPayload
from interlock.messaging.crashpoints import crash_point
from interlock.messaging.deadletter import (
    dead_letter,
    deliveries,
    redelivery_delay,
    settle,
)
from interlock.messaging.patience import waited_out
from interlock.otel import metrics
from interlock.otel.messaging import consuming
from interlock.services.errors import ExternalUnavailable, OutcomeUnknown, ProjectorSilent
from interlock.services.runtime.admission import JobAdmission
from interlock.services.runtime.failing import report
from interlock.services.runtime.jobs import Worked, run_jobs
from interlock.services.runtime.results import submit
from interlock.services.runtime.worker import Handler, StageResult, StageWorker

__all__ = ["Handler", "StageResult", "StageWorker", "after_failure", "escalation", "serve"]
log = logging.getLogger("interlock.stage")
tracer = trace.get_tracer("interlock.stage")


async def serve(
    broker: NatsBroker,
    stage: StageWorker,
    admission: JobAdmission,
    stop: asyncio.Event,
    *,
    workers: int = 8,
    grace: float = 5.0,
) -> None:
    """Run `stage`'s jobs from its durable pull consumer on the connection of `broker` (which
    must be started), `workers` at a time, until `stop` (see `jobs.run_jobs`)."""

    async def work(msg: Msg, worked: Worked) -> None:
        await consume(broker, stage, admission, msg, worked)

    await run_jobs(broker.connection, stage.source, work, stop, workers=workers, grace=grace)


async def consume(
    broker: NatsBroker,
    stage: StageWorker,
    admission: JobAdmission,
    raw: Msg,
    worked: Worked = lambda: None,
) -> None:
    """Run one job and settle it; `worked` is told when it no longer needs its worker."""
    with consuming(tracer, f"stage {stage.name}", raw.subject, raw.headers) as span:
        try:
            envelope = parse_envelope(raw.data)
            job = JobPayload.model_validate(envelope.payload)
            span.set_attributes(
                {
                    "interlock.workflow_id": envelope.workflow_id or "",
                    "interlock.workflow_type": envelope.workflow_type,
                    "interlock.stage": stage.name,
                    "interlock.job_id": job.job_id,
                    "interlock.state_version": envelope.expected_version or 0,
                }
            )
            if deliveries(raw) > 1:
                metrics.job_redelivered(stage.workflow_type, stage.name)
            stale = await waited_out(
                lambda: admission.is_stale(
                    envelope,
                    job,
                    workflow_type=stage.workflow_type,
                    stage=stage.name,
                    effects=stage.effects,
                    redelivered=deliveries(raw) > 1,
                ),
                raw.in_progress,
                what=f"{stage.name} job question",
            )
        except ProjectorSilent as exc:  # asked again on a later delivery, the worker freed
            metrics.job_question_unanswered(stage.workflow_type, stage.name)
            delay = nak_delay(exc, raw, stage.redelivery_s)
            log.warning("%s: %s; job %s again in %.0f s", stage.name, exc, raw.subject, delay)
            await settle(lambda: raw.nak(delay=delay), raw.subject)
            return
        except (MalformedMessage, ValidationError) as exc:
            reason, detail = _refusal(exc)
            span.set_attribute("interlock.dead_letter_reason", reason)
            await waited_out(
                lambda: dead_letter(broker, raw, source=stage.source, reason=reason, detail=detail),
                raw.in_progress,
                what=f"{stage.name} dead letter",
            )
            return
        if stale:
            span.set_attribute("interlock.job_stale", True)
            await settle(raw.ack, raw.subject)
            return
        crash_point(f"{stage.workflow_type}.{stage.name}.before_call")
        async with _kept_alive(raw, stage.heartbeat_s):  # the call, then the wait for its answer
            result = await _run(stage, job, envelope, raw)
            if result is None:
                return
            crash_point(f"{stage.workflow_type}.{stage.name}.after_effect")
            worked()
            span.set_attribute("interlock.event_type", result.event_type)
            if failed := result.payload.get("error_class") or _escalated(result):
                span.set_attribute("interlock.error_class", str(failed))
            await waited_out(
                lambda: submit(broker, stage, envelope, job, result),
                raw.in_progress,
                what=f"{stage.name} result",
            )
        crash_point(f"{stage.workflow_type}.{stage.name}.after_result")
    await settle(raw.ack, raw.subject)


def _refusal(exc: MalformedMessage | ValidationError) -> tuple[str, str]:
    """(reason, detail) of a job that must not be acted on; the detail names fields and
    error kinds, never the values a job carried."""
    if isinstance(exc, MalformedMessage):
        return exc.reason, exc.detail
    return "schema_mismatch", f"job: {summarise(exc)}"


async def _run(
    stage: StageWorker, job: JobPayload, envelope: Envelope, raw: Msg
) -> StageResult | None:
    try:
        return await stage.handler(job, envelope)
    except Exception as exc:
        given_up = after_failure(stage, exc, job, envelope, deliveries(raw))
        if given_up is None:
            delay = nak_delay(exc, raw, stage.redelivery_s)
            await settle(lambda: raw.nak(delay=delay), raw.subject)
        return given_up


def after_failure(
    stage: StageWorker, exc: Exception, job: JobPayload, envelope: Envelope, delivered: int
) -> StageResult | None:
    """What the stage does when delivery number `delivered` of `job` failed with `exc`:
    None to have the job redelivered; on the last delivery, the result it submits instead
    (`stage.exhausted`'s, else an `escalation`). Logged either way, redacted."""
    wf_id, inputs = envelope.workflow_id, job.inputs
    if delivered < subjects.STAGE_MAX_DELIVER:
        what = f"{stage.name} will retry job {job.job_id} (delivery {delivered})"
        report(log, logging.WARNING, what, exc, workflow_id=wf_id, inputs=inputs)
        return None
    what = f"{stage.name} gives up on job {job.job_id}"
    text = report(log, logging.ERROR, what, exc, workflow_id=wf_id, inputs=inputs)
    reported = stage.exhausted(exc, job) if stage.exhausted is not None else None
    return reported or escalation(exc, text)


def nak_delay(exc: Exception, raw: Msg, first: float = 1.0) -> float:
    """How long the failed job waits before its redelivery: the backoff growing from `first`
    seconds, or longer if the unavailable system asked for it (an HTTP `Retry-After` on
    429/503), within the redelivery cap. The job waits in the broker, not in the handler:
    nothing is held."""
    asked = exc.retry_after if isinstance(exc, ExternalUnavailable) else None
    return redelivery_delay(raw, first, asked)


def escalation(exc: Exception, text: str = "") -> StageResult:
    """The ESCALATE a stage submits when it gives up on a job that kept failing with `exc`
    (`text`: its redacted description, `failing.failure_text`)."""
    if isinstance(exc, OutcomeUnknown):
        return StageResult(
            "ESCALATE",
            {
                "reason": "effect_outcome_unknown",
                "detail": "the provider neither confirmed nor shows the effect: check it first",
                "idempotency_key": exc.idempotency_key,
            },
        )
    detail = text or type(exc).__name__
    return StageResult("ESCALATE", {"reason": "stage_unavailable", "detail": detail})


def _escalated(result: StageResult) -> str | None:
    return str(result.payload.get("reason")) if result.event_type == "ESCALATE" else None


@asynccontextmanager
async def _kept_alive(raw: Msg, every: float) -> AsyncIterator[None]:
    """Tell the broker every `every` seconds that `raw` is still being worked on, so a long
    call or a long wait for the projector's answer does not have it redelivered."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(every)
            await settle(raw.in_progress, raw.subject)

    heartbeat = asyncio.create_task(beat())
    try:
        yield
    finally:
        heartbeat.cancel()
        with suppress(asyncio.CancelledError):
            await heartbeat
