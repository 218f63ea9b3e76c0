"""The `request` workflow's transition rows and the guards they use.

`executing` is entered only by an `EFFECT_AUTHORIZED` whose payload matches the record: from
`classified` for an authorised route whose effect needs no approval, from `approved` for an
approval bound to the operation.
"""

from __future__ import annotations

from interlock.contracts.rules import RETRYABLE_ERROR, edges
from interlock.definition import Guard, Transition

T = Transition
WORKING = ("received", "validated", "normalized", "enriched", "classified", "approved", "executing")
PRE_APPROVAL = (
    "received",
    "validated",
    "normalized",
    "enriched",
    "classified",
    "approval_required",
)
RECORD = "record_versions"
STAMP = "stamp_versions"
OPERATOR = Guard(name="actor_role_in", params={"param": "operator_roles"})
APPROVER = Guard(name="actor_role_in", params={"param": "approver_roles"})
FRESH_APPROVAL = Guard(
    name="payload_matches",
    params={
        "data": {
            "workflow_version": "versions.workflow",
            "policy_version": "versions.policy",
            "effect": "route.effect",
        }
    },
)
AUTHORISED_ROUTE = Guard(
    name="payload_matches",
    params={
        "values": {"basis": "route"},
        "data": {
            "effect": ["request.requested_action", "classification.decision.requested_effect"],
            "route": "classification.decision.recommended_route",
            "fingerprint": "normalization.fingerprint",
            "versions.workflow": "versions.workflow",
        },
    },
)
NEEDS_NO_APPROVAL = Guard(
    name="payload_not_in", params={"field": "effect", "param": "approval_required_effects"}
)
BOUND_APPROVAL = Guard(
    name="payload_matches",
    params={
        "values": {"basis": "approval"},
        "data": {
            "effect": ["route.effect", "approval.effect"],
            "route": "route.route",
            "fingerprint": "normalization.fingerprint",
            "versions.workflow": "approval.workflow_version",
            "versions.policy": "approval.policy_version",
        },
    },
)


def flow_rows() -> list[Transition]:
    """The forward path and each stage's own failure outcomes."""
    return [
        # The workflow is created in `received`; START stamps the versions it runs under
        # and issues its first job (validate).
        T(source="received", event="START", target="received", reissue=True, action=STAMP),
        T(source="received", event="REQUEST_VALIDATED", target="validated"),
        T(
            source="received",
            event="REQUEST_UNSUPPORTED",
            target="failed",
            reason="unsupported_request",
        ),
        T(source="validated", event="REQUEST_NORMALIZED", target="normalized"),
        T(source="normalized", event="REQUEST_ENRICHED", target="enriched"),
        T(source="enriched", event="REQUEST_CLASSIFIED", target="classified", action=RECORD),
        *(
            T(
                source=state,
                event="CLASSIFICATION_INVALID",
                target="failed",
                reason="classification_invalid",
                action=RECORD,
            )
            for state in ("enriched", "classified")
        ),
        # A model timeout is retried durably: the backoff is a timer, the retry a new job.
        T(
            source="enriched",
            event=RETRYABLE_ERROR,
            target="enriched",
            guards=(Guard(name="attempts_remaining"),),
            action="schedule_retry",
        ),
        T(source="enriched", event=RETRYABLE_ERROR, target="failed", reason="retry_exhausted"),
        T(source="enriched", event="RETRY_DUE", target="enriched", reissue=True),
        T(
            source="classified",
            event="EFFECT_AUTHORIZED",
            target="executing",
            guards=(AUTHORISED_ROUTE, NEEDS_NO_APPROVAL),
            action=RECORD,
        ),
        T(
            source="classified",
            event="ROUTED_FOR_APPROVAL",
            target="approval_required",
            action=RECORD,
        ),
        T(
            source="classified",
            event="ROUTE_BLOCKED",
            target="blocked",
            reason="policy_block",
            action=RECORD,
        ),
        T(
            source="approval_required",
            event="APPROVED",
            target="approved",
            guards=(APPROVER, FRESH_APPROVAL),
        ),
        # An approver's consent to anything but the current operation fails the run closed.
        T(
            source="approval_required",
            event="APPROVED",
            target="failed",
            guards=(APPROVER,),
            reason="approval_stale",
        ),
        T(
            source="approval_required",
            event="APPROVAL_EXPIRED",
            target="failed",
            reason="approval_expired",
        ),
        T(
            source="approved",
            event="EFFECT_AUTHORIZED",
            target="executing",
            guards=(BOUND_APPROVAL,),
        ),
        T(source="executing", event="EFFECT_EXECUTED", target="completed"),
        T(source="executing", event="PERMANENT_ERROR", target="failed", reason="effect_failed"),
    ]


def recovery_rows() -> list[Transition]:
    """Operator resume, out-of-order commands, and stage failures, for many states."""
    return [
        # An operator resumes a run from its last checkpoint: the state's job is issued
        # again and any earlier one becomes stale. Stages revalidate what they read back.
        *(T(source=s, event="RESUME", target=s, guards=(OPERATOR,), reissue=True) for s in WORKING),
        # An upstream command to execute before the run is authorised is out of order:
        # it quarantines the request (fails it closed, audited) instead of being ignored,
        # because the caller's view of this request contradicts the workflow's.
        *edges(PRE_APPROVAL, "EXECUTE_REQUESTED", "failed", reason="state_conflict"),
        *edges(
            [s for s in WORKING if s != "executing"],
            "PERMANENT_ERROR",
            "failed",
            reason="permanent_error",
        ),
        *edges(WORKING, "ESCALATE", "failed", reason="escalated"),
    ]
