"""`resolve(definition, workflow, event, ctx) -> Decision`: the whole of the engine.

Default-deny: an event is accepted only if the table holds a row for the workflow's state and
the event's type whose guards all pass and whose loop limit allows it. Everything else is a
`Rejected` with a stable reason code, and a rejection never changes the workflow.
"""

from __future__ import annotations

from interlock.contracts.definition import EventSpec, Guard, Transition, WorkflowDefinition
from interlock.contracts.envelope import Envelope
from interlock.contracts.guards import GuardInput
from interlock.projector.engine import outputs
from interlock.projector.engine.actions import ACTIONS, Draft
from interlock.projector.engine.effects import track_effects
from interlock.projector.engine.failures import note_failure
from interlock.projector.engine.guards import GUARDS, Facts, Verdict
from interlock.projector.engine.model import (
    Accepted,
    Context,
    Decision,
    Execution,
    OutMessage,
    Rejected,
    Workflow,
)
from interlock.projector.engine.model_calls import budget_stop, record_model_calls


def resolve(
    definition: WorkflowDefinition, workflow: Workflow, event: Envelope, ctx: Context
) -> Decision:
    """Decide whether `event` moves `workflow`, and to what. Pure: same inputs, same answer."""
    spec = definition.event(event.type)
    rows = definition.transitions_from(workflow.state, event.type)
    rejection = _precheck(definition, workflow, event, spec, ctx, rows=rows)
    if rejection is not None:
        return rejection
    assert spec is not None  # _precheck rejects unknown events
    facts = Facts(
        definition=definition,
        workflow=workflow,
        event=event,
        ctx=ctx,
        parameters={**definition.parameters, **ctx.parameters},
        branch=_branch_of(workflow, event, spec),
    )
    chosen, labels = _choose(facts, rows)
    if chosen is None:
        return Rejected("guard_rejected", f"{event.type} refused in {workflow.state}", labels)
    return _apply(facts, spec, chosen, labels)


def _precheck(
    d: WorkflowDefinition,
    wf: Workflow,
    event: Envelope,
    spec: EventSpec | None,
    ctx: Context,
    *,
    rows: tuple[Transition, ...],
) -> Rejected | None:
    if event.event_id in wf.seen_event_ids:
        return Rejected("duplicate", f"event {event.event_id} was already processed")
    if d.is_terminal(wf.state):
        return Rejected("terminal", f"{wf.state} is terminal; {event.type} changes nothing")
    if spec is None or not rows:
        return Rejected("invalid_transition", f"{event.type} is not allowed in {wf.state}")
    if spec.answers_job:
        if event.causation_id not in wf.execution.open_jobs:
            return Rejected("stale_version", f"{event.type} answers no open job")
    elif event.expected_version is not None and event.expected_version != wf.version:
        return Rejected(
            "stale_version", f"expected version {event.expected_version}, at {wf.version}"
        )
    if spec.source == "timer":
        timer = next(
            (
                t
                for t in wf.execution.timers.values()
                if t.id == event.payload.get("timer_id") and t.event == event.type
            ),
            None,
        )
        if timer is None:
            return Rejected("stale_version", "the timer was superseded or already fired")
        if ctx.now < timer.fire_at:
            return Rejected(
                "guard_rejected", "the timer is not due yet", ("!timer_due",), timer.fire_at
            )
    return None


def _branch_of(wf: Workflow, event: Envelope, spec: EventSpec) -> str | None:
    if spec.answers_job and event.causation_id in wf.execution.open_jobs:
        return wf.execution.open_jobs[event.causation_id].branch
    branch = event.payload.get("branch") if spec.source == "timer" else None
    return str(branch) if branch is not None else None


def _choose(f: Facts, rows: tuple[Transition, ...]) -> tuple[Transition | None, tuple[str, ...]]:
    """The first of `rows` whose limit allows it and whose guards all pass."""
    labels: list[str] = []
    for row in rows:
        if row.limit and f.workflow.execution.counters.get(row.limit.counter, 0) >= row.limit.max:
            labels.append(f"!{row.limit.counter}_below_{row.limit.max}")
            continue
        verdicts = [_verdict(f, g) for g in row.guards]
        labels += [label for v in verdicts for label in v.labels]
        if all(v.ok for v in verdicts):
            return row, tuple(labels)
    return None, tuple(labels)


def _verdict(f: Facts, guard: Guard) -> Verdict:
    built_in = GUARDS.get(guard.name)
    if built_in is not None:
        return built_in(f, guard.params)
    held = f.ctx.guards[guard.name](
        GuardInput(
            state=f.workflow.state,
            data=f.workflow.data,
            payload=f.payload,
            params=guard.params,
            parameters=f.parameters,
            actor_role=f.event.actor.role,
            now=f.ctx.now,
        )
    )
    return Verdict(held, (guard.name if held else f"!{guard.name}",))


def _apply(f: Facts, spec: EventSpec, row: Transition, labels: tuple[str, ...]) -> Accepted:
    wf, definition = f.workflow, f.definition
    d = Draft.of(wf, row.target)
    _update_data(f, d)
    track_effects(f, d)
    note_failure(f, spec, d)
    record_model_calls(f, spec, d)
    if spec.answers_job:
        d.open_jobs.pop(f.event.causation_id or "", None)
    if spec.source == "timer":
        d.timers = {k: t for k, t in d.timers.items() if t.id != f.event.payload["timer_id"]}
    if row.limit is not None:
        d.counters[row.limit.counter] = d.counters.get(row.limit.counter, 0) + 1
    if row.action is not None:
        ACTIONS[row.action](f, d)
    stopped = budget_stop(f, d, dispatches=d.target != wf.state or row.reissue)
    if stopped is not None:
        labels = (*labels, "!model_budget")
    moved = d.target != wf.state
    if moved or row.reissue:
        d.open_jobs = {}
    if moved:
        d.drop_timers(keep=lambda t: t.scope != wf.state)
    if definition.is_terminal(d.target):
        d.drop_timers(keep=lambda t: False)
    if moved or row.reissue:
        outputs.enter(f, d, row.reason)
    if stopped is not None:
        d.review = stopped
    if f.event.type == definition.start_event:
        outputs.arm_workflow_timers(f, d, definition)
    messages: list[OutMessage] = outputs.job_messages(f, d)
    spec_out = definition.announcement(d.target) if moved else None
    if spec_out is not None:
        messages.extend(outputs.announcements(f, d, spec_out))
    in_review = d.target == definition.review_state
    return Accepted(
        workflow=freeze(wf, d, keep_review=in_review),
        from_state=wf.state,
        transition=row,
        messages=tuple(messages),
        timers_armed=tuple(d.armed),
        timers_cancelled=tuple(d.cancelled),
        guard_results=labels,
        note=d.review.note if in_review and d.review else row.reason,
    )


def _update_data(f: Facts, d: Draft) -> None:
    update = f.definition.data_updates.get(f.event.type)
    if update is None:
        return
    d.data[update.key] = f.event.payload
    if update.merge:
        d.data.update(f.event.payload)
    if update.versioned:
        d.data[f"{update.key}_version"] = int(d.data.get(f"{update.key}_version", 0)) + 1


def freeze(wf: Workflow, d: Draft, keep_review: bool) -> Workflow:
    """The checkpoint `d` drafts from `wf`."""
    execution = Execution(
        attempts=d.attempts,
        counters=d.counters,
        retry_target=d.retry_target,
        cancel_requested=d.cancel_requested,
        open_jobs=d.open_jobs,
        timers=d.timers,
        branches=d.branches,
        review=d.review if keep_review else None,
        effects=d.effects,
        model_calls=tuple(d.model_calls),
        model_spend=d.model_spend,
    )
    return wf.model_copy(
        update={
            "state": d.target,
            "version": d.version,
            "data": d.data,
            "execution": execution,
            "seen_event_ids": frozenset(),
        }
    )
