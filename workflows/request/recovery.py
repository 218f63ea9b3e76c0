"""What `request` version 3 changes: default-deny for out-of-order commands, a cancellation
before the effect, and compensation of the effect.

- `EXECUTE_REQUESTED` has no row at all: a command to execute before the run is authorised
  is refused without mutation (`invalid_transition`, audited with the state it met — what
  the case file calls a `state_conflict`), instead of failing the run: a client allowed to
  send signals can no longer end someone's request before approval.
- An operator may cancel a run before its effect (`CANCEL_REQUESTED` → `cancelled`, which
  promises no effect); after the effect there is no cancellation, only compensation.
- An effect whose outcome is unknown waits in `review` with its key, and an operator
  confirms the receipt found at the provider, re-runs it under the same key, or compensates:
  `compensating` looks the effect up by its key first (nothing found: nothing to reverse)
  and reverses it; `compensated` promises every committed effect reversed. A reversal the
  provider refuses returns to `review`, where compensation may be asked for again.
"""

from __future__ import annotations

from interlock import (
    COMPENSATE_EVENT,
    CONFIRM_EVENT,
    RERUN_EVENT,
    Effect,
    Empty,
    ErrorReport,
    Terminal,
    effect_is,
)
from interlock.contracts.definition import DataUpdate, EventSpec, Stage
from interlock.definition import Announcement, Transition
from interlock.workflows.request import payloads as rp
from interlock.workflows.request.table import OPERATOR, PRE_APPROVAL, flow_rows, recovery_rows

T = Transition
REVIEW, COMPENSATING = "review", "compensating"
CANCELLED, COMPENSATED = "cancelled", "compensated"
NEW_STATES = (REVIEW, COMPENSATING, CANCELLED, COMPENSATED)
NEW_TERMINALS = frozenset({CANCELLED, COMPENSATED})
CANCELLABLE = (*PRE_APPROVAL, "approved")
"""Where nothing has been done yet: a cancellation ends the run with no effect."""
UNKNOWN = effect_is("executing", "unknown")
STANDING = effect_is("executing", "committed", "unknown")

EFFECT_V2 = Effect(state="executing", committed=("EFFECT_EXECUTED",), confirmed=(CONFIRM_EVENT,))
EFFECT_V3 = Effect(
    state="executing",
    committed=("EFFECT_EXECUTED",),
    compensation=COMPENSATING,
    compensated=("EFFECT_COMPENSATED",),
    confirmed=(CONFIRM_EVENT,),
)
PROMISES_V2 = (
    Terminal(state="completed", effects="done"),
    Terminal(state="blocked", effects="none"),
    Terminal(state="failed", effects="none"),
)
PROMISES_V3 = (
    *PROMISES_V2,
    Terminal(state=CANCELLED, effects="none"),
    Terminal(state=COMPENSATED, effects="reversed"),
)

RECOVERY_EVENTS_V2 = (
    EventSpec(name=CONFIRM_EVENT, source="signal", payload=rp.EffectDone),
    EventSpec(name=RERUN_EVENT, source="signal", payload=Empty),
)
RECOVERY_EVENTS_V3 = (
    *RECOVERY_EVENTS_V2,
    EventSpec(name=COMPENSATE_EVENT, source="signal", payload=Empty),
    EventSpec(name="CANCEL_REQUESTED", source="signal", payload=rp.Cancellation),
    EventSpec(
        name="EFFECT_COMPENSATED", source="result", answers_job=True, payload=rp.Compensation
    ),
    EventSpec(name="COMPENSATION_FAILED", source="result", answers_job=True, payload=ErrorReport),
)
COMPENSATE_STAGE = Stage(
    name="compensate_effect",
    inputs=("authorization", "effect"),
    emits=("EFFECT_COMPENSATED", "COMPENSATION_FAILED"),
)
DATA_V3 = {
    CONFIRM_EVENT: DataUpdate(key="effect"),
    "CANCEL_REQUESTED": DataUpdate(key="cancellation"),
    "EFFECT_COMPENSATED": DataUpdate(key="compensation"),
    "COMPENSATION_FAILED": DataUpdate(key="compensation_failure"),
}
ANNOUNCEMENTS_V3 = (
    Announcement(
        state=CANCELLED,
        name="cancelled",
        fields={"cancellation": "cancellation", "versions": "versions"},
    ),
    Announcement(
        state=COMPENSATED,
        name="compensated",
        fields={"compensation": "compensation", "authorization": "authorization"},
    ),
)


def review_rows(version: int) -> list[Transition]:
    """An unknown outcome waits for an operator, holding the key to check first (v2: confirm
    or re-run; v3: compensate too, also after a refused reversal)."""
    rows = [
        T(source="executing", event="ESCALATE", target=REVIEW, reason="escalated"),
        T(source=REVIEW, event=CONFIRM_EVENT, target="completed", guards=(OPERATOR, UNKNOWN)),
        T(source=REVIEW, event=RERUN_EVENT, target="executing", guards=(OPERATOR, UNKNOWN)),
    ]
    if version >= 3:
        rows.append(
            T(
                source=REVIEW,
                event=COMPENSATE_EVENT,
                target=COMPENSATING,
                guards=(OPERATOR, STANDING),
            )
        )
    return rows


def compensation_rows() -> list[Transition]:
    """The compensate stage's outcomes: reversed, or back to review with the effect standing."""
    back = "compensation_failed"
    return [
        T(source=COMPENSATING, event="EFFECT_COMPENSATED", target=COMPENSATED),
        T(source=COMPENSATING, event="COMPENSATION_FAILED", target=REVIEW, reason=back),
        T(source=COMPENSATING, event="PERMANENT_ERROR", target=REVIEW, reason=back),
        T(source=COMPENSATING, event="ESCALATE", target=REVIEW, reason="escalated"),
        T(
            source=COMPENSATING,
            event="RESUME",
            target=COMPENSATING,
            guards=(OPERATOR,),
            reissue=True,
        ),
    ]


def cancellation_rows() -> list[Transition]:
    return [
        T(source=s, event="CANCEL_REQUESTED", target=CANCELLED, guards=(OPERATOR,))
        for s in CANCELLABLE
    ]


def rows(version: int) -> list[Transition]:
    """The table of `version`: v1's, v2's (review) or v3's (default-deny, cancel, compensate)."""
    table = [*flow_rows(), *recovery_rows()]
    if version < 2:
        return table
    table = [r for r in table if (r.source, r.event) != ("executing", "ESCALATE")]
    if version >= 3:
        table = [r for r in table if r.event != "EXECUTE_REQUESTED"]
        return [*table, *review_rows(version), *compensation_rows(), *cancellation_rows()]
    return [*table, *review_rows(version)]
