"""The invoice pipeline as a state machine: receive, extract, validate, approve, post, notify.

Every pause has a reason: `MANUAL_REVIEW` records it (audit reason, and `data.review_reason`
where a stage decided it); an approval that outlives its SLA is escalated, never approved.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from interlock import GuardInput, Retry, Timer, Workflow, check, guard
from interlock.definition import REVIEW_TARGET, Announcement, HumanWait
from interlock_invoice.document import InvoiceRequest
from interlock_invoice.recovery import (
    OPERATOR,
    REVERSED,
    REVERSIBLE_FROM,
    REVERSING,
    REVIEW,
    REVIEWER,
    WAITING,
    posting_effects,
)
from interlock_invoice.results import (
    Approval,
    Cancellation,
    DuplicateInvoice,
    Extracted,
    ExtractionFailed,
    Notified,
    Posted,
    PostingUnconfirmed,
    Rejection,
    RetryRequest,
    TotalsMismatch,
    UnknownSupplier,
    Valid,
)
from interlock_invoice.stages import POST_ATTEMPTS, extract, notify, post, reverse, validate

LATEST = 3
APPROVER = "invoice_approver"
PARAMETERS = {
    "approval_threshold": "1000.00",
    "approval_sla_seconds": 48 * 3600.0,
    "approver_limits": {APPROVER: "25000.00", "finance_controller": "250000.00"},
    "reviewer_roles": [APPROVER, "finance_controller", "operator"],
    "operator_roles": ["operator", "finance_controller"],
    # waits on a person: announced again after the deadline, then every reminder period
    "review_deadline_seconds": 8 * 3600.0,
    "review_reminder_seconds": 8 * 3600.0,
    "escalation_deadline_seconds": 4 * 3600.0,
    "escalation_reminder_seconds": 4 * 3600.0,
}
HUMAN_WAITS = (
    HumanWait(
        state=REVIEW,
        owner_role="finance_controller",
        deadline_param="review_deadline_seconds",
        reminder_every_param="review_reminder_seconds",
    ),
    HumanWait(
        state="APPROVAL_ESCALATED",
        owner_role="finance_controller",
        deadline_param="escalation_deadline_seconds",
        reminder_every_param="escalation_reminder_seconds",
    ),
)


def _amount(value: object) -> Decimal | None:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _total(g: GuardInput) -> Decimal | None:
    invoice = g.data.get("invoice")
    return _amount(invoice.get("total")) if isinstance(invoice, dict) else None


@guard
def needs_approval(g: GuardInput) -> bool:
    """The extracted total is at or above the `approval_threshold` parameter."""
    total, threshold = _total(g), _amount(g.parameters["approval_threshold"])
    return total is not None and threshold is not None and total >= threshold


@guard
def approval_covers_total(g: GuardInput) -> bool:
    """The approver's role has a limit covering the total, and they approve that total."""
    limits = g.parameters.get("approver_limits")
    limit = _amount(limits.get(g.actor_role)) if isinstance(limits, dict) else None
    total, approved = _total(g), _amount(g.payload.get("total"))
    if limit is None or total is None:
        return False
    return approved == total and total <= limit


@guard
def not_posted(g: GuardInput) -> bool:
    """Nothing was posted: a workflow with a posting number is never cancelled or rejected."""
    return g.data.get("posting_number") is None


WORK = ("EXTRACTING", "VALIDATING", "POSTING", "NOTIFYING")
TERMINAL = ("POSTED", "REJECTED", "CANCELLED")


def build(version: int = LATEST) -> Workflow:
    """Version 1 guards its review with `not_posted`; version 2 declares the posting as an
    effect, proves what each outcome promises about it, and recovers an unconfirmed posting
    (confirm the number found in the ledger, or post again under the same key); version 3
    also reverses it (`recovery`): on an operator's word, or when a cancellation comes after
    the posting."""
    wf = Workflow("invoice", version=version, description="From invoice file to posting")
    wf.settings(parameters=dict(PARAMETERS), human_waits=HUMAN_WAITS)
    _events(wf)
    _states(wf, reversible=version >= REVERSIBLE_FROM)
    _rows(wf, reversible=version >= REVERSIBLE_FROM)
    if version == 1:
        _cancellation_and_review(wf)
    else:
        posting_effects(wf, version)
    _announcements(wf, reversible=version >= REVERSIBLE_FROM)
    return wf


def _events(wf: Workflow) -> None:
    wf.request(InvoiceRequest)
    wf.result(Extracted, into="extracted", merge=True)
    wf.result(ExtractionFailed, into="extraction_failure", merge=True)
    wf.result(Valid, into="validation")
    for invalid in (TotalsMismatch, UnknownSupplier, DuplicateInvoice):
        wf.result(invalid, into="validation", merge=True)
    wf.result(Posted, into="posting", merge=True)
    wf.result(PostingUnconfirmed, into="posting_failure", merge=True)
    wf.result(Notified, into="notification")
    wf.failures()
    wf.signal("APPROVED", Approval, into="approval")
    wf.signal("REJECTED_BY_REVIEWER", Rejection, into="rejection")
    wf.signal("CANCEL_REQUESTED", Cancellation, into="cancellation")
    wf.signal("RETRY_REQUESTED", RetryRequest)
    wf.timer(
        Timer(
            kind="approval",
            event="APPROVAL_SLA_EXPIRED",
            delay_param="approval_sla_seconds",
            state="AWAITING_APPROVAL",
        )
    )


def _states(wf: Workflow, *, reversible: bool) -> None:
    terminal = (*TERMINAL, REVERSED) if reversible else TERMINAL
    wf.states(
        "RECEIVED",
        *WORK,
        *WAITING,
        REVIEW,
        *((REVERSING,) if reversible else ()),
        *terminal,
        terminal=terminal,
        waiting=(*WAITING, REVIEW),
        effects=("POSTING",),
        cancellable=("RECEIVED", "EXTRACTING", "VALIDATING", *WAITING, REVIEW),
    )
    wf.review(REVIEW, resumable=("EXTRACTING", "VALIDATING", "NOTIFYING"))
    wf.stage("EXTRACTING", extract, inputs=("request",))
    wf.stage("VALIDATING", validate, inputs=("invoice",))
    wf.stage("POSTING", post, inputs=("invoice",))
    wf.stage("NOTIFYING", notify, inputs=("invoice", "posting_number"))
    if reversible:
        wf.stage(REVERSING, reverse, inputs=("posting_number",))


def _rows(wf: Workflow, *, reversible: bool) -> None:
    wf.on("RECEIVED", "START", "EXTRACTING")
    wf.on("EXTRACTING", Extracted, "VALIDATING")
    wf.on("EXTRACTING", ExtractionFailed, REVIEW, reason="extraction_failed")
    # a transient extractor failure retries extraction only; receiving is settled
    wf.retrying("EXTRACTING", Retry(max_attempts=3), exhausted=REVIEW, reason="extraction_failed")

    wf.on("VALIDATING", Valid, "AWAITING_APPROVAL", guards=(check("needs_approval"),))
    wf.on("VALIDATING", Valid, "POSTING")
    wf.on("VALIDATING", TotalsMismatch, REVIEW, reason="totals_mismatch")
    wf.on("VALIDATING", UnknownSupplier, REVIEW, reason="unknown_supplier")
    wf.on("VALIDATING", DuplicateInvoice, REVIEW, reason="duplicate_invoice")
    wf.retrying("VALIDATING", Retry(max_attempts=3), exhausted=REVIEW, reason="validation_failed")

    for waiting in WAITING:
        wf.on(waiting, "APPROVED", "POSTING", guards=(check("approval_covers_total"),))
        wf.on(waiting, "REJECTED_BY_REVIEWER", "REJECTED", guards=(REVIEWER,))
    # the SLA escalates to the next owner; it never approves
    wf.on("AWAITING_APPROVAL", "APPROVAL_SLA_EXPIRED", "APPROVAL_ESCALATED", reason="approval_sla")

    if reversible:  # cancelled while posting, and posted: the posting is reversed
        cancelled = (check("cancel_requested"),)
        wf.on("POSTING", Posted, REVERSING, guards=cancelled, reason="cancelled_after_effect")
    wf.on("POSTING", Posted, "NOTIFYING")
    wf.on("POSTING", PostingUnconfirmed, REVIEW, reason="posting_unconfirmed")
    wf.retrying(
        "POSTING", Retry(max_attempts=POST_ATTEMPTS), exhausted=REVIEW, reason="posting_unconfirmed"
    )
    wf.on("POSTING", "PERMANENT_ERROR", "CANCELLED", guards=(check("cancel_requested"),))
    wf.on("POSTING", "PERMANENT_ERROR", REVIEW, reason="posting_rejected")

    wf.on("NOTIFYING", Notified, "POSTED")
    # a failed notification is retried on its own; the posting stands
    wf.retrying("NOTIFYING", Retry(max_attempts=3), exhausted=REVIEW, reason="notification_failed")
    wf.on("NOTIFYING", "PERMANENT_ERROR", REVIEW, reason="notification_failed")

    for state in ("EXTRACTING", "VALIDATING"):
        wf.on(state, "PERMANENT_ERROR", REVIEW, reason="permanent_error")
    for state in WORK:
        wf.on(state, "ESCALATE", REVIEW, reason="escalated")


def _cancellation_and_review(wf: Workflow) -> None:
    # cancellation: at once before posting; during posting it waits for the posting's outcome
    for state in ("RECEIVED", "EXTRACTING", "VALIDATING", *WAITING):
        wf.on(state, "CANCEL_REQUESTED", "CANCELLED")
    wf.on("POSTING", "CANCEL_REQUESTED", "POSTING", action="defer_cancel")
    wf.on(REVIEW, "CANCEL_REQUESTED", "CANCELLED", guards=(check("not_posted"),))
    wf.on(
        REVIEW,
        "RETRY_REQUESTED",
        REVIEW_TARGET,  # the step that paused
        guards=(OPERATOR, check("has_review_target")),
        action="resume_review",
    )
    wf.on(REVIEW, "REJECTED_BY_REVIEWER", "REJECTED", guards=(REVIEWER, check("not_posted")))
    # posting follows a valid invoice below the threshold or an approval covering its total;
    # an unconfirmed posting is a person's to investigate, never resumed from review
    wf.gate("POSTING", "INVOICE_VALID", "APPROVED", any_of=True)


def _announcements(wf: Workflow, *, reversible: bool) -> None:
    fields = {
        "supplier": "invoice.supplier",
        "invoice_number": "invoice.invoice_number",
        "total": "invoice.total",
        "currency": "invoice.currency",
    }
    wf.announce(
        Announcement(
            state="AWAITING_APPROVAL",
            name="approval_requested",
            fields={**fields, "document_sha256": "document_sha256"},
            expiry_timer="approval",
        )
    )
    wf.announce(Announcement(state="APPROVAL_ESCALATED", name="approval_escalated", fields=fields))
    wf.announce(Announcement(state=REVIEW, name="manual_review", fields=fields))
    wf.announce(
        Announcement(
            state="POSTED", name="completed", fields={**fields, "posting_number": "posting_number"}
        )
    )
    for outcome in ("REJECTED", "CANCELLED"):
        wf.announce(Announcement(state=outcome, name=outcome.lower(), fields=fields))
    if reversible:
        reversal = {**fields, "reversal_number": "reversal_number"}
        wf.announce(Announcement(state=REVERSED, name="reversed", fields=reversal))


PLUGIN_GUARDS = (needs_approval, approval_covers_total, not_posted)
STAGES = (extract, validate, post, notify, reverse)
