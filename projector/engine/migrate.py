"""Moving one workflow to another definition version (`interlock migrate-workflow`): an
operator's explicit act, checked against the target definition's graph and decided here, so
that a replay of the history re-decides it exactly as it was made.

A move is refused unless the target state exists in the target version, and unless the graph
allows it from where the workflow stands: never into an effect state, never into (or past) a
gate the workflow has not passed. Forward, the workflow may only move along rows without
guards that enter no gate or effect state; backward (to a state the current one is reachable
from) it may always move, since every gate on the way is passed again. A workflow whose
current state the target version lacks is judged from the target's initial state.
"""

from __future__ import annotations

from collections import deque

from interlock.contracts.definition import Transition, WorkflowDefinition
from interlock.contracts.envelope import Envelope
from interlock.projector.engine import outputs
from interlock.projector.engine.actions import Draft
from interlock.projector.engine.guards import Facts
from interlock.projector.engine.model import Accepted, Context, OutMessage, Workflow
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
    if state in target.effect_states:
        return f"{state} performs an effect; a workflow enters it only through its gate"
    standpoint = wf.state if wf.state in target.states else target.initial_state
    if standpoint == state:
        return None
    if standpoint in _reachable(target, state, ungated=False):
        return None  # backward: every gate between is passed again
    if state in _reachable(target, standpoint, ungated=True):
        return None
    return f"{state} lies past a gate {wf.workflow_id} has not passed (from {standpoint})"


def _reachable(d: WorkflowDefinition, start: str, *, ungated: bool) -> set[str]:
    """The states reachable from `start`; `ungated`: along rows without guards only, and
    never into a gate or effect state."""
    closed = {g.state for g in d.gates} | set(d.effect_states) if ungated else set()
    seen, todo = {start}, deque([start])
    while todo:
        here = todo.popleft()
        for row in d.transitions:
            if row.source == here and row.target not in seen and _open(row, closed, ungated):
                seen.add(row.target)
                todo.append(row.target)
    return seen


def _open(row: Transition, closed: set[str], ungated: bool) -> bool:
    return not ungated or (not row.guards and row.target not in closed)


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
    messages: list[OutMessage] = []
    if state != wf.state:
        d.open_jobs = {}
        d.drop_timers(keep=lambda t: t.scope is None)
        outputs.enter(facts, d, "migrated")
        messages = outputs.job_messages(facts, d)
        announced = target.announcement(state)
        if announced is not None:
            messages.append(outputs.announcement(facts, d, announced))
    return Accepted(
        workflow=freeze(moved, d, keep_review=state == target.review_state),
        from_state=wf.state,
        transition=Transition(source=wf.state, event=MIGRATE_EVENT, target=state),
        messages=tuple(messages),
        timers_armed=tuple(d.armed),
        timers_cancelled=tuple(d.cancelled),
        note=f"migrated from v{wf.definition_version} to v{target.version}",
        jobs_changed=set(d.open_jobs) != set(wf.execution.open_jobs),
    )
