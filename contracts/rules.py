"""Builders that expand policies shared by many states into explicit transitions.

Retry, cancellation, escalation and parallel joins apply to many states. Rather than hide
them in engine code, these helpers write them out as ordinary table rows, so the table a
reader (or the graph check) sees is the complete set of legal moves.
"""

from __future__ import annotations

from collections.abc import Iterable

from interlock.contracts.definition import RETRY_TARGET, Guard, Parallel, Transition

RETRYABLE_ERROR = "RETRYABLE_ERROR"
PERMANENT_ERROR = "PERMANENT_ERROR"
RETRY_DUE = "RETRY_DUE"
CANCEL_REQUESTED = "CANCEL_REQUESTED"


def retries(states: Iterable[str], wait_state: str, exhausted_target: str) -> list[Transition]:
    """Transient errors in `states` wait in `wait_state`; exhaustion leaves for review."""
    rows: list[Transition] = []
    for state in states:
        rows.append(
            Transition(
                source=state,
                event=RETRYABLE_ERROR,
                target=wait_state,
                guards=(Guard(name="attempts_remaining"),),
                action="schedule_retry",
            )
        )
        rows.append(
            Transition(
                source=state,
                event=RETRYABLE_ERROR,
                target=exhausted_target,
                reason="retries_exhausted",
            )
        )
    rows.append(
        Transition(source=wait_state, event=RETRY_DUE, target=RETRY_TARGET, action="resume_retry")
    )
    return rows


def cancellation(
    immediate: Iterable[str], deferred: Iterable[str], target: str
) -> list[Transition]:
    """Cancel at once where no effect is in flight; elsewhere mark it and reconcile first."""
    rows = [Transition(source=s, event=CANCEL_REQUESTED, target=target) for s in immediate]
    rows += [
        Transition(source=s, event=CANCEL_REQUESTED, target=s, action="defer_cancel")
        for s in deferred
    ]
    return rows


def edges(states: Iterable[str], event: str, target: str, reason: str) -> list[Transition]:
    """The same event leads from each of `states` to `target` (escalation, failure …)."""
    return [Transition(source=s, event=event, target=target, reason=reason) for s in states]


def parallel(
    spec: Parallel, retry_wait_reason: str = "branch_retries_exhausted"
) -> list[Transition]:
    """The rows of a parallel state: branch success, join, branch retry and branch failure."""
    p = spec.state
    rows: list[Transition] = []
    for branch in spec.branches:
        rows.append(
            Transition(
                source=p,
                event=branch.success_event,
                target=spec.join_target,
                guards=(Guard(name="join_ready"),),
                action="branch_succeeded",
            )
        )
        rows.append(
            Transition(source=p, event=branch.success_event, target=p, action="branch_succeeded")
        )
    rows += [
        Transition(
            source=p,
            event=RETRYABLE_ERROR,
            target=p,
            guards=(Guard(name="branch_attempts_remaining"),),
            action="branch_retry",
        ),
        Transition(
            source=p, event=RETRYABLE_ERROR, target=spec.failure_target, reason=retry_wait_reason
        ),
        Transition(source=p, event=RETRY_DUE, target=p, action="branch_resume"),
        Transition(
            source=p, event=PERMANENT_ERROR, target=spec.failure_target, reason="branch_failed"
        ),
    ]
    return rows
