"""Engine bookkeeping named by transitions (`action=`): retries, branches, cancellation.

Each action edits a `Draft` of the next checkpoint. Actions compute; they never perform I/O —
a scheduled retry is a timer row the projector commits, not a sleep.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from interlock.contracts.definition import RetryPolicy, Stage
from interlock.contracts.ids import timer_id_for
from interlock.contracts.model_calls import ModelCallRecord, ModelSpend
from interlock.projector.engine.guards import Facts, current_branch
from interlock.projector.engine.model import (
    BranchState,
    EffectFact,
    OpenJob,
    Review,
    TimerRef,
    Workflow,
)


@dataclass
class JobOrder:
    stage: Stage
    state: str
    attempt: int
    branch: str | None = None
    repair: bool = False


@dataclass
class Draft:
    """The next checkpoint under construction; frozen into a `Workflow` at the end."""

    target: str
    data: dict[str, Any]
    attempts: dict[str, int]
    counters: dict[str, int]
    retry_target: str | None
    cancel_requested: bool
    open_jobs: dict[str, OpenJob]
    timers: dict[str, TimerRef]
    branches: dict[str, BranchState]
    review: Review | None
    version: int
    effects: dict[str, EffectFact] = field(default_factory=dict)
    model_calls: list[ModelCallRecord] = field(default_factory=list)
    model_spend: ModelSpend = field(default_factory=ModelSpend)
    armed: list[TimerRef] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    jobs: list[JobOrder] = field(default_factory=list)
    repair: bool = False

    @classmethod
    def of(cls, wf: Workflow, target: str) -> Draft:
        ex = wf.execution
        return cls(
            target=target,
            data=dict(wf.data),
            attempts=dict(ex.attempts),
            counters=dict(ex.counters),
            retry_target=ex.retry_target,
            cancel_requested=ex.cancel_requested,
            open_jobs=dict(ex.open_jobs),
            timers=dict(ex.timers),
            branches=dict(ex.branches),
            review=ex.review,
            version=wf.version + 1,
            effects=dict(ex.effects),
            model_calls=list(ex.model_calls),
            model_spend=ex.model_spend,
        )

    def arm(
        self,
        f: Facts,
        kind: str,
        event: str,
        seconds: float,
        *,
        scope: str | None,
        branch: str | None = None,
    ) -> None:
        timer = TimerRef(
            id=timer_id_for(f.workflow.tenant_id, f.workflow.workflow_id, self.version, kind),
            kind=kind,
            event=event,
            fire_at=f.ctx.now + timedelta(seconds=seconds),
            scope=scope,
            branch=branch,
        )
        self.timers[kind] = timer
        self.armed.append(timer)

    def drop_timers(self, keep: Callable[[TimerRef], bool]) -> None:
        for kind, timer in list(self.timers.items()):
            if not keep(timer):
                del self.timers[kind]
                self.cancelled.append(timer.id)


def jitter_fraction(workflow_id: str, version: int, attempt: int, branch: str = "") -> float:
    """A fraction in [0, 1) that spreads retries of different workflows apart like a random
    draw, but derived from the workflow, the version being decided and the attempt, so that
    deciding the same event again (a replay of the history) arms the same timer."""
    seed = f"{workflow_id}\x1f{version}\x1f{attempt}\x1f{branch}".encode()
    return int.from_bytes(hashlib.sha256(seed).digest()[:8], "big") / 2**64


def backoff_seconds(policy: RetryPolicy, failures: int, rand: float, scale: float) -> float:
    """Exponential backoff with jitter and a cap: attempt n waits base·2^(n-1), capped,
    plus up to `jitter` of that, by `rand` in [0, 1); `scale` shrinks time for demos and
    tests."""
    delay = min(policy.cap_seconds, policy.base_seconds * 2 ** (failures - 1))
    return float((delay + delay * policy.jitter * rand) * scale)


def asked_seconds(f: Facts, policy: RetryPolicy, scale: float) -> float:
    """The wait the failing system asked for (`ErrorReport.retry_after_s`, from its
    `Retry-After`), within the policy's cap; 0 when it asked for none."""
    asked = f.payload.get("retry_after_s")
    if isinstance(asked, bool) or not isinstance(asked, int | float) or asked <= 0:
        return 0.0
    return float(min(policy.cap_seconds, asked) * scale)


def schedule_retry(f: Facts, d: Draft) -> None:
    source = f.workflow.state
    failures = d.attempts.get(source, 0) + 1
    d.attempts[source] = failures
    d.retry_target = source
    rand = jitter_fraction(f.workflow.workflow_id, d.version, failures)
    policy, scale = f.definition.retry[source], f.parameters["retry_delay_scale"]
    seconds = max(backoff_seconds(policy, failures, rand, scale), asked_seconds(f, policy, scale))
    # The backoff timer lives in the state the workflow waits in: a separate wait state, or
    # the working state itself when a definition retries several states in place.
    d.arm(f, "retry", "RETRY_DUE", seconds, scope=d.target)


def resume_retry(f: Facts, d: Draft) -> None:
    if d.retry_target is not None:
        d.target, d.retry_target = d.retry_target, None


def defer_cancel(f: Facts, d: Draft) -> None:
    d.cancel_requested = True


def request_repair(f: Facts, d: Draft) -> None:
    d.repair = True


def branch_succeeded(f: Facts, d: Draft) -> None:
    if f.branch is not None:
        d.branches[f.branch] = d.branches[f.branch].model_copy(update={"status": "succeeded"})


def branch_retry(f: Facts, d: Draft) -> None:
    branch = current_branch(f)
    if branch is None:
        return
    current = d.branches[branch.name]
    failures = current.attempts + 1
    d.branches[branch.name] = BranchState(status="retry_wait", attempts=failures)
    rand = jitter_fraction(f.workflow.workflow_id, d.version, failures, branch.name)
    scale = f.parameters["retry_delay_scale"]
    seconds = max(
        backoff_seconds(branch.retry, failures, rand, scale),
        asked_seconds(f, branch.retry, scale),
    )
    d.arm(
        f, f"retry:{branch.name}", "RETRY_DUE", seconds, scope=f.workflow.state, branch=branch.name
    )


def branch_resume(f: Facts, d: Draft) -> None:
    branch = current_branch(f)
    if branch is None:
        return
    current = d.branches[branch.name]
    d.branches[branch.name] = current.model_copy(update={"status": "running"})
    d.jobs.append(JobOrder(branch.stage, f.workflow.state, current.attempts + 1, branch.name))


def resume_review(f: Facts, d: Draft) -> None:
    if d.review is not None and d.review.target is not None:
        d.target = d.review.target
        d.attempts.pop(d.target, None)
        d.review = None


def record_versions(f: Facts, d: Draft) -> None:
    """Merge the payload's `versions` (name -> version label) into `data.versions`, so a
    run records every contract that shaped it (workflow, classifier, prompt, policy …)."""
    _merge_versions(d, f.payload.get("versions"))


def stamp_versions(f: Facts, d: Draft) -> None:
    """Record the definition's declared `versions` parameter in `data.versions`: a run keeps
    the labels it started under, whatever later deployments declare."""
    _merge_versions(d, f.parameters.get("versions"))


def _merge_versions(d: Draft, labels: Any) -> None:
    if isinstance(labels, dict) and labels:
        d.data["versions"] = {**(d.data.get("versions") or {}), **labels}


ACTIONS: dict[str, Callable[[Facts, Draft], None]] = {
    fn.__name__: fn
    for fn in (
        schedule_retry,
        resume_retry,
        defer_cancel,
        request_repair,
        branch_succeeded,
        branch_retry,
        branch_resume,
        resume_review,
        record_versions,
        stamp_versions,
    )
}
