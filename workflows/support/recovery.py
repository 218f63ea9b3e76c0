"""What `support` (from version 3) promises about its refund, and the rows that keep it.

The refund is an effect the engine tracks: `ACTION_EXECUTED` (or a receipt that broke an
invariant) commits it, an escalation from `EXECUTING_ACTION` leaves it unknown, a successful
compensation reverses it. The customer notification is a follow-up effect that `COMPLETED`
requires. Once the refund stands, a cancellation compensates it and a reviewer's rejection is
refused; while its outcome is unknown, an operator confirms the receipt found at the provider,
re-runs the refund under the same idempotency key, or compensates.
"""

from __future__ import annotations

from interlock import (
    COMPENSATE_EVENT,
    CONFIRM_EVENT,
    RERUN_EVENT,
    Effect,
    EffectStatus,
    Terminal,
    effect_is,
)
from interlock.definition import Guard, Transition
from interlock.workflows.support.table import OPERATOR, REVIEW

T = Transition
ACT, NOTIFY, COMPENSATING = "EXECUTING_ACTION", "NOTIFYING_CUSTOMER", "COMPENSATING"

EFFECTS = (
    Effect(
        state=ACT,
        committed=("ACTION_EXECUTED", "POST_ACTION_INVARIANT_FAILED"),
        compensation=COMPENSATING,
        compensated=("COMPENSATION_SUCCEEDED",),
        confirmed=(CONFIRM_EVENT,),
    ),
    Effect(state=NOTIFY, committed=("CUSTOMER_NOTIFIED",), unknown=(), gated=False),
)
TERMINALS = (
    Terminal(state="COMPLETED", effects="done", requires=(ACT, NOTIFY)),
    Terminal(state="FAILED_COMPENSATED", effects="reversed"),
    *(Terminal(state=s, effects="none") for s in ("REJECTED", "CANCELLED", "FAILED")),
)


def _refund(*status: EffectStatus) -> Guard:
    return effect_is(ACT, *status)


NO_EFFECT = effect_is(None, "none")
REPLACED = frozenset(
    {(REVIEW, "REJECTED_BY_REVIEWER"), (REVIEW, "COMPENSATE"), (REVIEW, "RESOLVED")}
)
"""The version 2 review rows version 3 replaces."""


def cancellation_rows(states: tuple[str, ...], target: str) -> list[Transition]:
    """In `states` a cancellation ends the workflow while nothing stands, compensates a
    refund that stands, and is refused (`!effect_…`) while the refund's outcome is unknown."""
    rows: list[Transition] = []
    for state in states:
        rows.append(T(source=state, event="CANCEL_REQUESTED", target=target, guards=(NO_EFFECT,)))
        rows.append(
            T(
                source=state,
                event="CANCEL_REQUESTED",
                target=COMPENSATING,
                guards=(_refund("committed"),),
                reason="cancelled_after_effect",
            )
        )
    return rows


def review_rows() -> list[Transition]:
    """Review's ways out once an effect may have happened."""
    return [
        T(
            source=REVIEW,
            event="REJECTED_BY_REVIEWER",
            target="REJECTED",
            guards=(OPERATOR, NO_EFFECT),
        ),
        # resolving a review after the refund sends the notification it still owes
        T(source=REVIEW, event="RESOLVED", target=NOTIFY, guards=(OPERATOR, _refund("committed"))),
        T(
            source=REVIEW,
            event=COMPENSATE_EVENT,
            target=COMPENSATING,
            guards=(OPERATOR, _refund("committed", "unknown")),
        ),
        T(source=REVIEW, event=CONFIRM_EVENT, target=NOTIFY, guards=(OPERATOR, _refund("unknown"))),
        T(source=REVIEW, event=RERUN_EVENT, target=ACT, guards=(OPERATOR, _refund("unknown"))),
    ]
