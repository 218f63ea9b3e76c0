"""The `support` workflow's own transition rows: classification and its confidence gate,
model-output repair, recommendation, policy validation, approval or rejection, the refund and
its reconciliation, notification, and compensation.

Policies shared by many states (retries, cancellation, escalation, deadlines, parallel
evidence) are added by `definition` through the builders of `contracts.rules`.
"""

from __future__ import annotations

from interlock.definition import REVIEW_TARGET, Guard, Limit, Transition

T = Transition
REVIEW = "MANUAL_REVIEW"
OPERATOR = Guard(name="actor_role_in", params={"param": "operator_roles"})
REVIEWER = Guard(name="reviewer_current")


def core_rows(evidence_entry: str, evidence_rows: list[Transition]) -> list[Transition]:
    return [
        T(source="REQUEST_RECEIVED", event="START", target="CLASSIFYING"),
        T(
            source="CLASSIFYING",
            event="CLASSIFICATION_SUCCEEDED",
            target=evidence_entry,
            guards=(
                Guard(
                    name="confidence_at_least", params={"param": "min_classification_confidence"}
                ),
            ),
        ),
        T(
            source="CLASSIFYING",
            event="CLASSIFICATION_SUCCEEDED",
            target=REVIEW,
            reason="low_classification_confidence",
        ),
        *evidence_rows,
        T(
            source="GENERATING_RECOMMENDATION",
            event="RECOMMENDATION_GENERATED",
            target="VALIDATING_POLICY",
        ),
        *(
            row
            for state, counter in (
                ("CLASSIFYING", "classify_repairs"),
                ("GENERATING_RECOMMENDATION", "recommend_repairs"),
            )
            for row in (
                T(
                    source=state,
                    event="MODEL_OUTPUT_INVALID",
                    target=state,
                    limit=Limit(counter=counter, max=1),
                    reissue=True,
                    action="request_repair",
                ),
                T(
                    source=state,
                    event="MODEL_OUTPUT_INVALID",
                    target=REVIEW,
                    reason="model_output_invalid",
                ),
            )
        ),
        T(
            source="VALIDATING_POLICY",
            event="POLICY_VALID",
            target="AWAITING_APPROVAL",
            guards=(Guard(name="validation_current"),),
        ),
        T(source="VALIDATING_POLICY", event="POLICY_INVALID", target="REJECTED"),
        T(
            source="VALIDATING_POLICY",
            event="POLICY_UNCLEAR",
            target=REVIEW,
            reason="policy_unclear",
        ),
        T(
            source="AWAITING_APPROVAL",
            event="APPROVED",
            target="EXECUTING_ACTION",
            guards=(Guard(name="approval_valid"),),
        ),
        T(
            source="AWAITING_APPROVAL",
            event="REJECTED_BY_REVIEWER",
            target="REJECTED",
            guards=(REVIEWER,),
        ),
        T(
            source="AWAITING_APPROVAL",
            event="CHANGES_REQUESTED",
            target="GENERATING_RECOMMENDATION",
            guards=(REVIEWER,),
            limit=Limit(counter="revisions", max=2),
        ),
        T(
            source="AWAITING_APPROVAL",
            event="CHANGES_REQUESTED",
            target=REVIEW,
            guards=(REVIEWER,),
            reason="revision_limit_reached",
        ),
        T(
            source="AWAITING_APPROVAL",
            event="APPROVAL_EXPIRED",
            target=REVIEW,
            reason="approval_expired",
        ),
        T(
            source="EXECUTING_ACTION",
            event="ACTION_EXECUTED",
            target="COMPENSATING",
            guards=(Guard(name="cancel_requested"),),
            reason="cancelled_after_effect",
        ),
        T(source="EXECUTING_ACTION", event="ACTION_EXECUTED", target="NOTIFYING_CUSTOMER"),
        T(source="EXECUTING_ACTION", event="POST_ACTION_INVARIANT_FAILED", target="COMPENSATING"),
        T(
            source="EXECUTING_ACTION",
            event="PERMANENT_ERROR",
            target="CANCELLED",
            guards=(Guard(name="cancel_requested"),),
        ),
        T(source="EXECUTING_ACTION", event="PERMANENT_ERROR", target="FAILED"),
        T(source="NOTIFYING_CUSTOMER", event="CUSTOMER_NOTIFIED", target="COMPLETED"),
        T(
            source="NOTIFYING_CUSTOMER",
            event="PERMANENT_ERROR",
            target=REVIEW,
            reason="notification_failed",
        ),
        T(source="COMPENSATING", event="COMPENSATION_SUCCEEDED", target="FAILED_COMPENSATED"),
        T(
            source="COMPENSATING",
            event="COMPENSATION_FAILED",
            target=REVIEW,
            reason="compensation_failed",
        ),
        T(
            source=REVIEW,
            event="RETRY_REQUESTED",
            target=REVIEW_TARGET,
            guards=(OPERATOR, Guard(name="has_review_target")),
            action="resume_review",
        ),
        T(source=REVIEW, event="REJECTED_BY_REVIEWER", target="REJECTED", guards=(OPERATOR,)),
        T(
            source=REVIEW,
            event="COMPENSATE",
            target="COMPENSATING",
            guards=(OPERATOR, Guard(name="has_data", params={"key": "action"})),
        ),
        T(
            source=REVIEW,
            event="RESOLVED",
            target="COMPLETED",
            guards=(OPERATOR, Guard(name="has_data", params={"key": "action"})),
        ),
    ]
