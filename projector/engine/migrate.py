"""Moving one workflow to another definition version (`interlock migrate-workflow`): an
operator's explicit act, checked against the target definition's graph and decided here, so
that a replay of the history re-decides it exactly as it was made.

A move is refused unless the target state exists in the target version and the graph
allows it from where the workflow stands (its state; in review or a retry wait, the state it
came from; a state the target lacks, the target's initial state): never out of an effect in
flight, never into an effect, gate (`WorkflowDefinition.gates`) or terminal state. Forward,
the workflow may move along rows that enter no gate or effect state; backward (to a state its
standpoint is reachable from) along rows that enter no effect state, so every gate on the way
is passed again and no effect runs twice. Review and retry waits are exits from anywhere, not
progress: no path runs through them.
"""

from __future__ import annotations

from collections import deque

from interlock.contracts.definition import Transition, WorkflowDefinition
from interlock.contracts.envelope import Envelope
from interlock.projector.engine import outputs
from interlock.projector.engine.actions import Draft
from interlock.projector.engine.guards import Facts
from interlock.projector.engine.model import (
    Accepted,
    Context,
    EffectFact,
    OutMessage,
    Workflow,
)
from interlock.projector.engine.resolve import freeze

MIGRATE_EVENT = "WORKFLOW_MIGRATED"
"""The type of the event a move is recorded under (no definition declares it, so it can only
be made by an operator against the database, never sent over the broker)."""


def refusal(
    source: WorkflowDefinition, target: WorkflowDefinition, wf: Workflow, state: str
) -> str | None:
    """Why `wf` may not move to `state` of `target` (None: it may)."""
    if source.is_terminal(wf.state):
        return f"{wf.workflow_id} is in {wf.state}, a terminal state"
    if target.workflow_type != wf.workflow_type:
        return f"v{target.version} defines {target.workflow_type}, not {wf.workflow_type}"
    if (target.version, state) == (wf.definition_version, wf.state):
        return f"{wf.workflow_id} is already in {state} under v{target.version}"
    if state not in target.states:
        return f"v{target.version} of {target.workflow_type} has no state {state}"
    if state == wf.state:
        return None
    if wf.state in source.effect_states:
        return f"{wf.workflow_id} is in {wf.state}, an effect in flight; let it settle first"
    if state in target.effect_states:
        return f"{state} performs an effect; a workflow enters it only through its gate"
    if target.is_terminal(state):
        return f"{state} is terminal; end a workflow by cancelling it, not by moving it"
    gate = next((g for g in target.gates if g.state == state), None)
    if gate is not None:
        return f"{state} is entered only through its gate ({', '.join(gate.events)})"
    exits = frozenset({target.review_state, target.retry_wait_state} - {None})
    standpoint = _standpoint(target, wf)
    if standpoint in _reachable(target, state, closed=exits | target.effect_states):
        return None  # backward: every gate between is passed again
    gated = frozenset({g.state for g in target.gates} | target.effect_states)
    if state in _reachable(target, standpoint, closed=exits | gated):
        return None
    return f"{state} lies past a gate {wf.workflow_id} has not passed (from {standpoint})"


def _standpoint(target: WorkflowDefinition, wf: Workflow) -> str:
    """Where the workflow's progress stands, in `target`'s states."""
    ex, here = wf.execution, wf.state
    if here == target.review_state and ex.review is not None:
        here = ex.review.from_state
    elif here == target.retry_wait_state and ex.retry_target is not None:
        here = ex.retry_target
    return here if here in target.states else target.initial_state


def _reachable(d: WorkflowDefinition, start: str, *, closed: frozenset[str | None]) -> set[str]:
    """The states reachable from `start` without entering a `closed` one."""
    seen, todo = {start}, deque([start])
    while todo:
        here = todo.popleft()
        for row in d.transitions:
            if row.source == here and row.target not in seen | closed:
                seen.add(row.target)
                todo.append(row.target)
    return seen


def move(
    target: WorkflowDefinition, wf: Workflow, state: str, event: Envelope, ctx: Context
) -> Accepted:
    """The decision to move `wf` to `state` of `target`, as `event` (the operator's
    `MIGRATE_EVENT`) asks. The caller has checked `refusal` first. A move into another state
    enters it as a transition would (its stage job, its timers), the old state's jobs and
    timers dropped, its announcement made; a move that keeps the state keeps them."""
    moved = wf.model_copy(update={"definition_version": target.version})
    facts = Facts(
        definition=target,
        workflow=moved,
        event=event,
        ctx=ctx,
        parameters={**target.parameters, **ctx.parameters},
    )
    d = Draft.of(moved, state)
    if not d.effects:
        # what the operator's tool found in the audit of a workflow decided before the engine
        # kept effect facts; recorded in the event, so a replay moves it the same way
        found = event.payload.get("effects") or {}
        d.effects = {k: EffectFact.model_validate(v) for k, v in found.items()}
    messages: list[OutMessage] = []
    if state != wf.state:
        d.open_jobs = {}
        d.drop_timers(keep=lambda t: t.scope is None)
        outputs.enter(facts, d, "migrated")
        messages = outputs.job_messages(facts, d)
        announced = target.announcement(state)
        if announced is not None:
            messages.extend(outputs.announcements(facts, d, announced))
    return Accepted(
        workflow=freeze(moved, d, keep_review=state == target.review_state),
        from_state=wf.state,
        transition=Transition(source=wf.state, event=MIGRATE_EVENT, target=state),
        messages=tuple(messages),
        timers_armed=tuple(d.armed),
        timers_cancelled=tuple(d.cancelled),
        note=f"migrated from v{wf.definition_version} to v{target.version}",
    )
