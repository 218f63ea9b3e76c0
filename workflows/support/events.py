"""The `support` workflow's events: every result, signal and timer, with its payload model."""

from __future__ import annotations

from interlock import (
    CONFIRM_EVENT,
    RERUN_EVENT,
    Empty,
    ErrorReport,
    Escalation,
    ModelOutputInvalid,
    Payload,
    TimerFired,
)
from interlock.contracts.definition import EventSpec
from interlock.workflows.support import payloads as sp

RESULTS: dict[str, type[Payload]] = {
    "CLASSIFICATION_SUCCEEDED": sp.Classification,
    "POLICY_RETRIEVED": sp.PolicyEvidence,
    "ACCOUNT_INSPECTED": sp.AccountEvidence,
    "RECOMMENDATION_GENERATED": sp.Recommendation,
    "POLICY_VALID": sp.ValidationReport,
    "POLICY_INVALID": sp.ValidationReport,
    "POLICY_UNCLEAR": sp.ValidationReport,
    "MODEL_OUTPUT_INVALID": ModelOutputInvalid,
    "ACTION_EXECUTED": sp.ActionReceipt,
    "POST_ACTION_INVARIANT_FAILED": sp.InvariantFailure,
    "CUSTOMER_NOTIFIED": sp.NotificationReceipt,
    "COMPENSATION_SUCCEEDED": sp.CompensationReceipt,
    "COMPENSATION_FAILED": ErrorReport,
    "RETRYABLE_ERROR": ErrorReport,
    "PERMANENT_ERROR": ErrorReport,
    "ESCALATE": Escalation,
}
SIGNALS: dict[str, type[Payload]] = {
    "APPROVED": sp.Approval,
    "REJECTED_BY_REVIEWER": sp.ReviewerRejection,
    "CHANGES_REQUESTED": sp.ChangeRequest,
    "CANCEL_REQUESTED": sp.Cancellation,
    "RETRY_REQUESTED": Empty,
    "COMPENSATE": Empty,
    "RESOLVED": Empty,
}
TIMERS = ("RETRY_DUE", "APPROVAL_EXPIRED", "DEADLINE_EXCEEDED")
EVENTS = (
    EventSpec(name="START", source="request", payload=sp.SupportRequest),
    *(EventSpec(name=n, source="result", answers_job=True, payload=m) for n, m in RESULTS.items()),
    *(EventSpec(name=n, source="signal", payload=m) for n, m in SIGNALS.items()),
    *(EventSpec(name=n, source="timer", payload=TimerFired) for n in TIMERS),
)

RECOVERY_EVENTS = (
    EventSpec(name=CONFIRM_EVENT, source="signal", payload=sp.ActionReceipt),
    EventSpec(name=RERUN_EVENT, source="signal", payload=Empty),
)
"""The recovery of a refund whose outcome is unknown (version 3 on)."""
