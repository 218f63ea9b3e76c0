"""What entering a state produces: stage jobs, timers, announcements, review records."""

from __future__ import annotations

from typing import Any

from interlock.contracts import subjects
from interlock.contracts.definition import Announcement, WorkflowDefinition
from interlock.contracts.envelope import Actor, Envelope
from interlock.contracts.ids import derive, job_id_for
from interlock.contracts.jobs import JOB_EVENT_TYPE, JobPayload
from interlock.projector.engine.actions import Draft, JobOrder
from interlock.projector.engine.guards import Facts, lookup
from interlock.projector.engine.model import BranchState, OpenJob, OutMessage, Review

PROJECTOR = Actor(id="projector", role="system")


def enter(f: Facts, d: Draft, reason: str | None) -> None:
    """Book the consequences of arriving in `d.target` from another state."""
    definition, target = f.definition, d.target
    par = definition.parallel_state(target)
    if par is not None:
        d.branches = {b.name: BranchState(status="running") for b in par.branches}
        d.jobs += [JobOrder(b.stage, target, 1, b.name) for b in par.branches]
    else:
        d.branches = {
            name: b if b.status == "succeeded" else b.model_copy(update={"status": "cancelled"})
            for name, b in d.branches.items()
        }
        stage = definition.stages.get(target)
        if stage is not None:
            d.jobs.append(JobOrder(stage, target, d.attempts.get(target, 0) + 1))
    for timer in definition.timers:
        if timer.state == target:
            d.arm(f, timer.kind, timer.event, float(f.parameters[timer.delay_param]), scope=target)
    if target == definition.review_state:
        d.review = _review(f, d, reason)


def _review(f: Facts, d: Draft, reason: str | None) -> Review:
    source = f.workflow.state
    if source == f.definition.retry_wait_state:
        source = f.workflow.execution.retry_target or source
    escalated = f.event.type == "ESCALATE"
    payload_reason = f.payload.get("reason") if escalated else None
    key = f.payload.get("idempotency_key") if escalated else None
    resumable = source if source in f.definition.resumable_states else None
    return Review(
        reason=str(payload_reason or reason or f.event.type.lower()),
        from_state=source,
        event_type=f.event.type,
        target=resumable,
        idempotency_key=str(key) if key else None,
    )


def job_messages(f: Facts, d: Draft) -> list[OutMessage]:
    """Turn job orders into envelopes and record them as open jobs."""
    wf, messages = f.workflow, []
    for order in d.jobs:
        job_id = job_id_for(
            wf.tenant_id, wf.workflow_id, d.version, order.branch or order.stage.name
        )
        d.open_jobs[job_id] = OpenJob(stage=order.stage.name, branch=order.branch)
        job = JobPayload(
            job_id=job_id,
            stage=order.stage.name,
            state=order.state,
            branch=order.branch,
            attempt=order.attempt,
            repair=d.repair,
            cancel_requested=d.cancel_requested,
            definition_version=wf.definition_version,
            inputs={k: d.data[k] for k in order.stage.inputs if d.data.get(k) is not None},
        )
        messages.append(
            OutMessage(
                subject=subjects.job(wf.workflow_type, order.stage.name),
                envelope=_envelope(f, d, job_id, JOB_EVENT_TYPE, job.model_dump(mode="json")),
            )
        )
    return messages


def announcements(f: Facts, d: Draft, spec: Announcement) -> list[OutMessage]:
    """The announcement on its every-tenant subject and, the same envelope, on its
    tenant's (`wf.tenant.<tenant>.…`), which a client limited to that tenant reads."""
    message = announcement(f, d, spec)
    tenant = subjects.tenant_out(f.workflow.tenant_id, f.workflow.workflow_type, spec.name)
    return [message, OutMessage(subject=tenant, envelope=message.envelope)]


def announcement(f: Facts, d: Draft, spec: Announcement) -> OutMessage:
    payload: dict[str, Any] = {
        "workflow_id": f.workflow.workflow_id,
        "state": d.target,
        "state_version": d.version,
        "definition_version": f.workflow.definition_version,
    }
    payload.update({name: lookup(d.data, path) for name, path in spec.fields.items()})
    if spec.expiry_timer and spec.expiry_timer in d.timers:
        payload["expires_at"] = d.timers[spec.expiry_timer].fire_at.isoformat()
    if d.review is not None and d.target == f.definition.review_state:
        payload["review"] = d.review.model_dump(mode="json")
    event_id = derive("out", f.workflow.tenant_id, f.workflow.workflow_id, d.version, spec.name)
    return OutMessage(
        subject=subjects.out(f.workflow.workflow_type, spec.name),
        envelope=_envelope(f, d, event_id, spec.name.upper(), payload),
    )


def arm_workflow_timers(f: Facts, d: Draft, definition: WorkflowDefinition) -> None:
    for timer in definition.timers:
        if timer.state is None:
            d.arm(f, timer.kind, timer.event, float(f.parameters[timer.delay_param]), scope=None)


def _envelope(f: Facts, d: Draft, event_id: str, type_: str, payload: dict[str, Any]) -> Envelope:
    wf = f.workflow
    return Envelope(
        event_id=event_id,
        type=type_,
        workflow_type=wf.workflow_type,
        workflow_id=wf.workflow_id,
        tenant_id=wf.tenant_id,
        actor=PROJECTOR,
        causation_id=f.event.event_id,
        correlation_id=wf.correlation_id,
        occurred_at=f.ctx.now,
        expected_version=d.version,
        payload=payload,
    )
