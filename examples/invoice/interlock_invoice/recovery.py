"""What the invoice definition promises about its posting (from version 2), and the rows that
keep it.

The posting is an effect the engine tracks: `INVOICE_POSTED` commits it; an unconfirmed
answer, a timeout or an escalation leaves it unknown until someone looks in the ledger. An
operator then confirms the number found there, posts again under the same key or (from
version 3) has it reversed. From version 3 a cancellation that comes after the posting
reverses it too: `REVERSING` looks the posting up by its key when its outcome is unknown and
reverses it, ending `REVERSED`, whose promise (every effect reversed) the graph check proves.
Nothing posted is ever cancelled or rejected as if it had not been.
"""

from __future__ import annotations

from interlock import COMPENSATE_EVENT, CONFIRM_EVENT, RERUN_EVENT, Workflow, check, effect_is
from interlock.definition import REVIEW_TARGET
from interlock_invoice.results import Posted, PostingReversed, PostingUnconfirmed, ReversalFailed

REVIEW = "MANUAL_REVIEW"
REVERSING, REVERSED = "REVERSING", "REVERSED"
WAITING = ("AWAITING_APPROVAL", "APPROVAL_ESCALATED")
REVIEWER = check("actor_role_in", param="reviewer_roles")
OPERATOR = check("actor_role_in", param="operator_roles")
REVERSIBLE_FROM = 3
"""The first definition version with the posting's compensation."""


def posting_effects(wf: Workflow, version: int) -> None:
    """The posting and notification as effects, the terminals' promises and the rows after
    the posting: review's ways out and cancellation."""
    reversible = version >= REVERSIBLE_FROM
    wf.event(CONFIRM_EVENT, "signal", Posted, into="posting", merge=True)
    wf.signal(RERUN_EVENT)
    if reversible:
        wf.result(PostingReversed, into="reversal", merge=True)
        wf.result(ReversalFailed, into="reversal_failure", merge=True)
        wf.signal(COMPENSATE_EVENT)
    wf.effect(
        "POSTING",
        committed=(Posted,),
        unknown=(PostingUnconfirmed, "RETRYABLE_ERROR", "ESCALATE"),
        confirmed=(CONFIRM_EVENT,),
        compensation=REVERSING if reversible else None,
        compensated=(PostingReversed,) if reversible else (),
    )
    wf.effect("NOTIFYING", committed=("NOTIFIED",), unknown=(), gated=False)
    wf.terminal("POSTED", effects="done", requires=("POSTING", "NOTIFYING"))
    wf.terminal("REJECTED", "CANCELLED", effects="none")
    _review_and_cancellation(wf)
    if reversible:
        wf.terminal(REVERSED, effects="reversed")
        _reversal(wf)
    wf.gate("POSTING", "INVOICE_VALID", "APPROVED", any_of=True)


def _review_and_cancellation(wf: Workflow) -> None:
    nothing, unknown = effect_is(None, "none"), effect_is("POSTING", "unknown")
    for state in ("RECEIVED", "EXTRACTING", "VALIDATING", *WAITING):
        wf.on(state, "CANCEL_REQUESTED", "CANCELLED")
    wf.on("POSTING", "CANCEL_REQUESTED", "POSTING", action="defer_cancel")
    wf.on(REVIEW, "CANCEL_REQUESTED", "CANCELLED", guards=(nothing,))
    wf.on(
        REVIEW,
        "RETRY_REQUESTED",
        REVIEW_TARGET,
        guards=(OPERATOR, check("has_review_target")),
        action="resume_review",
    )
    wf.on(REVIEW, "REJECTED_BY_REVIEWER", "REJECTED", guards=(REVIEWER, nothing))
    wf.on(REVIEW, CONFIRM_EVENT, "NOTIFYING", guards=(OPERATOR, unknown))
    wf.on(REVIEW, RERUN_EVENT, "POSTING", guards=(OPERATOR, unknown))


def _reversal(wf: Workflow) -> None:
    """A posting that stands, or may stand, is reversed on an operator's word; a cancellation
    that comes after it reverses it too (an unknown one is refused: compensate it)."""
    posted, standing = (
        effect_is("POSTING", "committed"),
        effect_is("POSTING", "committed", "unknown"),
    )
    wf.on(REVIEW, COMPENSATE_EVENT, REVERSING, guards=(OPERATOR, standing))
    wf.on(REVIEW, "CANCEL_REQUESTED", REVERSING, guards=(posted,), reason="cancelled_after_effect")
    wf.on(REVERSING, PostingReversed, REVERSED)
    wf.on(REVERSING, ReversalFailed, REVIEW, reason="reversal_failed")
    wf.on(REVERSING, "PERMANENT_ERROR", REVIEW, reason="reversal_failed")
    wf.on(REVERSING, "ESCALATE", REVIEW, reason="escalated")
