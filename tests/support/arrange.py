"""Arrange a checkpoint in which one given transition row is the one the engine must take.

For a row of the table: put the workflow in the row's source state with complete evidence,
make the event answer an open job (or fire an armed timer), satisfy the row's guards, and
defeat every earlier row for the same (state, event) — by exhausting its limit or violating
one of its guards. The expected state is the row's target (dynamic targets resolved).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from interlock.contracts.definition import RETRY_TARGET
from interlock.contracts.effectcheck import effects_of
from interlock.contracts.envelope import Envelope
from interlock.definition import REVIEW_TARGET, Transition, WorkflowDefinition
from interlock.projector.engine.guards import lookup
from interlock.projector.engine.model import (
    BranchState,
    EffectFact,
    Execution,
    OpenJob,
    Review,
    TimerRef,
    Workflow,
)
from tests.support.loose import loose
from tests.support.payloads import PAYLOADS, envelope, payloads_for
from tests.support.request_payloads import request_data

JOB_ID = "job-under-test"
TIMER_ID = "timer-under-test"


@dataclass
class Scene:
    definition: WorkflowDefinition
    state: str
    event: str
    now: datetime
    data: dict[str, Any]
    payload: dict[str, Any]
    role: str | None = None
    branch: str | None = None
    ex: dict[str, Any] = field(default_factory=dict)

    def parallel_branches(self) -> list[str]:
        par = self.definition.parallel_state(self.state)
        return [b.name for b in par.branches] if par else []


def _baseline_data(definition: WorkflowDefinition) -> dict[str, Any]:
    if definition.workflow_type == "request":
        return request_data()
    return {
        "request": PAYLOADS["START"],
        "classification": PAYLOADS["CLASSIFICATION_SUCCEEDED"],
        "policy": PAYLOADS["POLICY_RETRIEVED"],
        "account": PAYLOADS["ACCOUNT_INSPECTED"],
        "recommendation": PAYLOADS["RECOMMENDATION_GENERATED"],
        "recommendation_version": 1,
        "validation": PAYLOADS["POLICY_VALID"],
    }


def _set_branch(s: Scene, name: str, **changes: Any) -> None:
    branches = s.ex.setdefault("branches", {})
    branches[name] = branches[name].model_copy(update=changes)


def _others(s: Scene, status: str) -> None:
    for name in s.parallel_branches():
        if name != s.branch:
            _set_branch(s, name, status=status)


def _put(target: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value


def _unlisted(s: Scene, p: dict[str, Any]) -> None:
    if lookup(s.payload, p["field"]) in loose(s.definition.parameters[p["param"]]):
        _put(s.payload, p["field"], "not-listed")


def _match_record(s: Scene, p: dict[str, Any]) -> None:
    """Make the payload agree with the data (and every listed path agree with each other)."""
    for name, paths in p.get("data", {}).items():
        listed = [paths] if isinstance(paths, str) else paths
        value = next((v for v in (lookup(s.data, q) for q in listed) if v), "agreed")
        for path in listed:
            _put(s.data, path, value)
        _put(s.payload, name, value)
    for name, value in p.get("values", {}).items():
        _put(s.payload, name, value)


def _contradict_record(s: Scene, p: dict[str, Any]) -> None:
    name = next(iter(p.get("data", {})), None) or next(iter(p["values"]))
    _put(s.payload, name, "contradicts-the-record")


STATUSES = ("none", "committed", "compensated", "unknown")


def _effects(s: Scene, p: dict[str, Any], *, hold: bool) -> None:
    """Set the effect facts `effect_is(p)` reads so that it holds (or fails)."""
    wanted = list(p["status"])
    status = wanted[0] if hold else next(x for x in STATUSES if x not in wanted)
    states = [p["state"]] if "state" in p else [e.state for e in effects_of(s.definition)]
    facts = s.ex.setdefault("effects", {})
    for state in states if hold else states[:1]:
        facts[state] = EffectFact(status=status, idempotency_key="key-under-test")


Arranger = Callable[[Scene, dict[str, Any]], None]
SATISFY: dict[str, Arranger] = {
    "attempts_remaining": lambda s, p: s.ex.setdefault("attempts", {}).pop(s.state, None),
    "branch_attempts_remaining": lambda s, p: _set_branch(s, s.branch or "", attempts=0),
    "join_ready": lambda s, p: _others(s, "succeeded"),
    "confidence_at_least": lambda s, p: s.payload.update(confidence=0.95),
    "validation_current": lambda s, p: s.payload.update(passed=True, recommendation_version=1),
    "approval_valid": lambda s, p: setattr(s, "role", "support_approver"),
    "reviewer_current": lambda s, p: setattr(s, "role", "support_approver"),
    "cancel_requested": lambda s, p: s.ex.update(cancel_requested=True),
    "actor_role_in": lambda s, p: setattr(s, "role", "operator"),
    "has_review_target": lambda s, p: s.ex.update(
        review=Review(reason="r", from_state="CLASSIFYING", event_type="E", target="CLASSIFYING")
    ),
    "has_data": lambda s, p: s.data.update({p["key"]: PAYLOADS["ACTION_EXECUTED"]}),
    "payload_matches": _match_record,
    "payload_not_in": _unlisted,
    "effect_is": lambda s, p: _effects(s, p, hold=True),
}
VIOLATE: dict[str, Arranger] = {
    "attempts_remaining": lambda s, p: s.ex.setdefault("attempts", {}).update(
        {s.state: s.definition.retry[s.state].max_attempts - 1}
    ),
    "branch_attempts_remaining": lambda s, p: _set_branch(s, s.branch or "", attempts=99),
    "join_ready": lambda s, p: _others(s, "running"),
    "confidence_at_least": lambda s, p: s.payload.update(confidence=0.2),
    "validation_current": lambda s, p: s.payload.update(recommendation_version=7),
    "approval_valid": lambda s, p: setattr(s, "role", "customer"),
    "reviewer_current": lambda s, p: setattr(s, "role", "customer"),
    "cancel_requested": lambda s, p: s.ex.update(cancel_requested=False),
    "actor_role_in": lambda s, p: setattr(s, "role", "customer"),
    "has_review_target": lambda s, p: s.ex.update(review=None),
    "has_data": lambda s, p: s.data.pop(p["key"], None),
    "payload_matches": _contradict_record,
    "payload_not_in": lambda s, p: _put(
        s.payload, p["field"], loose(s.definition.parameters[p["param"]])[0]
    ),
    "effect_is": lambda s, p: _effects(s, p, hold=False),
}


def _answering_job(s: Scene) -> None:
    branches = s.parallel_branches()
    if branches:
        par = s.definition.parallel_state(s.state)
        assert par is not None
        by_event = {b.success_event: b.name for b in par.branches}
        s.branch = by_event.get(s.event, branches[-1])
        s.ex["branches"] = {n: BranchState(status="running") for n in branches}
    stage = s.definition.stages.get(s.state)
    s.ex["open_jobs"] = {JOB_ID: OpenJob(stage=stage.name if stage else "x", branch=s.branch)}


def _armed_timer(s: Scene) -> None:
    branches = s.parallel_branches()
    if branches:
        s.branch = branches[-1]
        s.ex["branches"] = {n: BranchState(status="running") for n in branches}
        s.ex["branches"][s.branch] = BranchState(status="retry_wait", attempts=1)
        s.payload["branch"] = s.branch
    fire_at = s.now - timedelta(seconds=1)
    s.ex["timers"] = {"t": TimerRef(id=TIMER_ID, kind="t", event=s.event, fire_at=fire_at)}
    s.payload.update(timer_id=TIMER_ID, fire_at=fire_at.isoformat())


def arrange(
    definition: WorkflowDefinition, row: Transition, now: datetime
) -> tuple[Workflow, Envelope, str]:
    """A (checkpoint, event, expected state) triple that must take `row`."""
    spec = definition.event(row.event)
    assert spec is not None
    payload = copy.deepcopy(payloads_for(definition.workflow_type)[row.event])
    s = Scene(definition, row.source, row.event, now, _baseline_data(definition), payload)
    if spec.answers_job:
        _answering_job(s)
    if spec.source == "timer":
        _armed_timer(s)
    s.ex.setdefault("timers", {})["approval"] = TimerRef(
        id="approval-timer",
        kind="approval",
        event="APPROVAL_EXPIRED",
        fire_at=now + timedelta(hours=1),
        scope="AWAITING_APPROVAL",
    )
    expected = row.target
    if row.target == RETRY_TARGET:
        expected = next(iter(definition.retry))
        s.ex["retry_target"] = expected
    if row.target == REVIEW_TARGET:
        SATISFY["has_review_target"](s, {})
        expected = "CLASSIFYING"
    for earlier in definition.transitions_from(row.source, row.event):
        if earlier == row:
            break
        _defeat(s, earlier, row)
    for guard in row.guards:
        SATISFY[guard.name](s, guard.params)
    workflow = Workflow(
        workflow_id="wf-1",
        workflow_type=definition.workflow_type,
        tenant_id="acme",
        state=row.source,
        version=5,
        definition_version=definition.version,
        data=s.data,
        execution=Execution(**s.ex),
    )
    event = envelope(
        row.event,
        workflow_type=definition.workflow_type,
        payload=s.payload,
        role=s.role,
        causation_id=JOB_ID if spec.answers_job else None,
        occurred_at=now,
    )
    return workflow, event, expected


def _defeat(s: Scene, earlier: Transition, row: Transition) -> None:
    if earlier.limit is not None:
        s.ex.setdefault("counters", {})[earlier.limit.counter] = earlier.limit.max
        return
    guard = next(g for g in earlier.guards if g not in row.guards)
    VIOLATE[guard.name](s, guard.params)
