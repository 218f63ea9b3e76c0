"""The `support` workflow of seed 000: classify, gather evidence, recommend, validate,
approve, act, notify — with retries, escalation, cancellation and compensation.

Version 1 is the seed's sequential table (17 states). Version 2 gathers policy and account
evidence in parallel branches joined before the recommendation; everything else is the same.
Both stay executable: a workflow keeps the definition version it started with.
"""

from __future__ import annotations

from contracts import payloads as p
from contracts import rules
from contracts import support_payloads as sp
from contracts.definition import (
    REVIEW_TARGET,
    Announcement,
    Branch,
    DataUpdate,
    EventSpec,
    Gate,
    Guard,
    Limit,
    Parallel,
    RetryPolicy,
    Stage,
    TimerSpec,
    Transition,
    WorkflowDefinition,
)

T = Transition
REVIEW = "MANUAL_REVIEW"
PRE_EFFECT = (
    "CLASSIFYING",
    "RETRIEVING_POLICY",
    "INSPECTING_ACCOUNT",
    "GENERATING_RECOMMENDATION",
    "VALIDATING_POLICY",
)
TERMINAL = frozenset({"COMPLETED", "REJECTED", "CANCELLED", "FAILED", "FAILED_COMPENSATED"})
OPERATOR = Guard(name="actor_role_in", params={"param": "operator_roles"})
REVIEWER = Guard(name="reviewer_current")

EVENTS = (
    EventSpec(name="START", source="request", payload=sp.SupportRequest),
    EventSpec(
        name="CLASSIFICATION_SUCCEEDED",
        source="result",
        answers_job=True,
        payload=sp.Classification,
    ),
    EventSpec(
        name="POLICY_RETRIEVED", source="result", answers_job=True, payload=sp.PolicyEvidence
    ),
    EventSpec(
        name="ACCOUNT_INSPECTED", source="result", answers_job=True, payload=sp.AccountEvidence
    ),
    EventSpec(
        name="RECOMMENDATION_GENERATED",
        source="result",
        answers_job=True,
        payload=sp.Recommendation,
    ),
    EventSpec(name="POLICY_VALID", source="result", answers_job=True, payload=sp.ValidationReport),
    EventSpec(
        name="POLICY_INVALID", source="result", answers_job=True, payload=sp.ValidationReport
    ),
    EventSpec(
        name="POLICY_UNCLEAR", source="result", answers_job=True, payload=sp.ValidationReport
    ),
    EventSpec(
        name="MODEL_OUTPUT_INVALID", source="result", answers_job=True, payload=p.ModelOutputInvalid
    ),
    EventSpec(name="ACTION_EXECUTED", source="result", answers_job=True, payload=sp.ActionReceipt),
    EventSpec(
        name="POST_ACTION_INVARIANT_FAILED",
        source="result",
        answers_job=True,
        payload=sp.InvariantFailure,
    ),
    EventSpec(
        name="CUSTOMER_NOTIFIED", source="result", answers_job=True, payload=sp.NotificationReceipt
    ),
    EventSpec(
        name="COMPENSATION_SUCCEEDED",
        source="result",
        answers_job=True,
        payload=sp.CompensationReceipt,
    ),
    EventSpec(name="COMPENSATION_FAILED", source="result", answers_job=True, payload=p.ErrorReport),
    EventSpec(name="RETRYABLE_ERROR", source="result", answers_job=True, payload=p.ErrorReport),
    EventSpec(name="PERMANENT_ERROR", source="result", answers_job=True, payload=p.ErrorReport),
    EventSpec(name="ESCALATE", source="result", answers_job=True, payload=p.Escalation),
    EventSpec(name="APPROVED", source="signal", payload=sp.Approval),
    EventSpec(name="REJECTED_BY_REVIEWER", source="signal", payload=sp.ReviewerRejection),
    EventSpec(name="CHANGES_REQUESTED", source="signal", payload=sp.ChangeRequest),
    EventSpec(name="CANCEL_REQUESTED", source="signal", payload=sp.Cancellation),
    EventSpec(name="RETRY_REQUESTED", source="signal", payload=p.Empty),
    EventSpec(name="COMPENSATE", source="signal", payload=p.Empty),
    EventSpec(name="RESOLVED", source="signal", payload=p.Empty),
    EventSpec(name="RETRY_DUE", source="timer", payload=p.TimerFired),
    EventSpec(name="APPROVAL_EXPIRED", source="timer", payload=p.TimerFired),
    EventSpec(name="DEADLINE_EXCEEDED", source="timer", payload=p.TimerFired),
)

RETRY = {
    "CLASSIFYING": RetryPolicy(max_attempts=2),
    "RETRIEVING_POLICY": RetryPolicy(max_attempts=3),
    "INSPECTING_ACCOUNT": RetryPolicy(max_attempts=4),
    "GENERATING_RECOMMENDATION": RetryPolicy(max_attempts=2),
    "VALIDATING_POLICY": RetryPolicy(max_attempts=3),
    "NOTIFYING_CUSTOMER": RetryPolicy(max_attempts=5),
}

STAGES = {
    "CLASSIFYING": Stage(name="classify", inputs=("request", "invalid_model_output")),
    "RETRIEVING_POLICY": Stage(name="retrieve_policy", inputs=("request", "classification")),
    "INSPECTING_ACCOUNT": Stage(name="inspect_account", inputs=("request",)),
    "GENERATING_RECOMMENDATION": Stage(
        name="generate_recommendation",
        inputs=(
            "request",
            "classification",
            "policy",
            "account",
            "revision_feedback",
            "invalid_model_output",
        ),
    ),
    "VALIDATING_POLICY": Stage(
        name="validate_policy",
        inputs=("request", "recommendation", "recommendation_version", "policy", "account"),
    ),
    "EXECUTING_ACTION": Stage(
        name="execute_action",
        inputs=("request", "recommendation", "recommendation_version", "approval"),
    ),
    "NOTIFYING_CUSTOMER": Stage(name="notify_customer", inputs=("request", "action")),
    "COMPENSATING": Stage(name="compensate", inputs=("action", "recommendation_version")),
}

DATA = {
    "START": DataUpdate(key="request"),
    "CLASSIFICATION_SUCCEEDED": DataUpdate(key="classification"),
    "POLICY_RETRIEVED": DataUpdate(key="policy"),
    "ACCOUNT_INSPECTED": DataUpdate(key="account"),
    "RECOMMENDATION_GENERATED": DataUpdate(key="recommendation", versioned=True),
    "POLICY_VALID": DataUpdate(key="validation"),
    "POLICY_INVALID": DataUpdate(key="validation"),
    "POLICY_UNCLEAR": DataUpdate(key="validation"),
    "MODEL_OUTPUT_INVALID": DataUpdate(key="invalid_model_output"),
    "APPROVED": DataUpdate(key="approval"),
    "REJECTED_BY_REVIEWER": DataUpdate(key="reviewer_rejection"),
    "CHANGES_REQUESTED": DataUpdate(key="revision_feedback"),
    "ACTION_EXECUTED": DataUpdate(key="action"),
    # The effect happened even though its receipt broke an invariant: it is the action on
    # record, and what compensation reverses.
    "POST_ACTION_INVARIANT_FAILED": DataUpdate(key="action"),
    "CUSTOMER_NOTIFIED": DataUpdate(key="notification"),
    "COMPENSATION_SUCCEEDED": DataUpdate(key="compensation"),
    "COMPENSATION_FAILED": DataUpdate(key="compensation_failure"),
}

OUTCOME_FIELDS = {"customer_id": "request.customer_id", "category": "classification.category"}
ANNOUNCEMENTS = (
    Announcement(
        state="AWAITING_APPROVAL",
        name="approval_requested",
        fields={
            "recommendation_version": "recommendation_version",
            "action_type": "recommendation.action_type",
            "amount": "recommendation.amount",
            "currency": "recommendation.currency",
            "evidence_refs": "recommendation.evidence_refs",
            "rationale": "recommendation.rationale",
            "customer_id": "request.customer_id",
        },
        expiry_timer="approval",
    ),
    Announcement(state=REVIEW, name="manual_review", fields=OUTCOME_FIELDS),
    Announcement(
        state="COMPLETED",
        name="completed",
        fields={**OUTCOME_FIELDS, "action": "action", "notification": "notification"},
    ),
    *(
        Announcement(state=s, name=s.lower(), fields=OUTCOME_FIELDS)
        for s in ("REJECTED", "CANCELLED", "FAILED", "FAILED_COMPENSATED")
    ),
)

PARAMETERS = {
    "approval_sla_seconds": 24 * 3600.0,
    "deadline_seconds": 7 * 24 * 3600.0,
    "retry_delay_scale": 1.0,
    "min_classification_confidence": 0.75,
    "approver_limits": {"support_approver": "500.00", "support_supervisor": "5000.00"},
    "operator_roles": ["support_supervisor", "operator"],
}


def _core_rows(evidence_entry: str, evidence_rows: list[Transition]) -> list[Transition]:
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


def _definition(version: int, parallel_evidence: bool) -> WorkflowDefinition:
    work = list(PRE_EFFECT)
    retry = dict(RETRY)
    stages = dict(STAGES)
    parallel: tuple[Parallel, ...] = ()
    if parallel_evidence:
        gather = Parallel(
            state="GATHERING_EVIDENCE",
            branches=tuple(
                Branch(
                    name=name,
                    label=label,
                    stage=stages.pop(label),
                    success_event=event,
                    retry=retry.pop(label),
                )
                for name, label, event in (
                    ("policy", "RETRIEVING_POLICY", "POLICY_RETRIEVED"),
                    ("account", "INSPECTING_ACCOUNT", "ACCOUNT_INSPECTED"),
                )
            ),
            join_target="GENERATING_RECOMMENDATION",
            failure_target=REVIEW,
        )
        parallel = (gather,)
        work = [
            "CLASSIFYING",
            "GATHERING_EVIDENCE",
            "GENERATING_RECOMMENDATION",
            "VALIDATING_POLICY",
        ]
        entry, evidence_rows = gather.state, rules.parallel(gather)
    else:
        entry = "RETRIEVING_POLICY"
        evidence_rows = [
            T(source="RETRIEVING_POLICY", event="POLICY_RETRIEVED", target="INSPECTING_ACCOUNT"),
            T(
                source="INSPECTING_ACCOUNT",
                event="ACCOUNT_INSPECTED",
                target="GENERATING_RECOMMENDATION",
            ),
        ]
    serial_work = [w for w in work if w not in {par.state for par in parallel}]
    after_approval = ("EXECUTING_ACTION", "NOTIFYING_CUSTOMER", "COMPENSATING")
    cancellable = ["REQUEST_RECEIVED", *work, "AWAITING_APPROVAL", "RETRY_WAIT", REVIEW]
    transitions = [
        *_core_rows(entry, evidence_rows),
        *rules.retries(retry, wait_state="RETRY_WAIT", exhausted_target=REVIEW),
        *rules.cancellation(cancellable, deferred=["EXECUTING_ACTION"], target="CANCELLED"),
        *rules.edges(serial_work, rules.PERMANENT_ERROR, "FAILED", reason="permanent_error"),
        *rules.edges(
            [*work, "AWAITING_APPROVAL", *after_approval, "RETRY_WAIT"],
            "ESCALATE",
            REVIEW,
            reason="escalated",
        ),
        *rules.edges(
            [*work, "AWAITING_APPROVAL", "RETRY_WAIT"],
            "DEADLINE_EXCEEDED",
            REVIEW,
            reason="deadline_exceeded",
        ),
    ]
    states = [
        "REQUEST_RECEIVED",
        *work,
        "AWAITING_APPROVAL",
        *after_approval,
        "RETRY_WAIT",
        REVIEW,
        *sorted(TERMINAL),
    ]
    return WorkflowDefinition(
        workflow_type="support",
        version=version,
        description=__doc__ or "",
        states=tuple(states),
        initial_state="REQUEST_RECEIVED",
        terminal_states=TERMINAL,
        waiting_states=frozenset({"AWAITING_APPROVAL", "RETRY_WAIT", REVIEW}),
        effect_states=frozenset({"EXECUTING_ACTION"}),
        review_state=REVIEW,
        resumable_states=frozenset(work),
        events=EVENTS,
        transitions=tuple(transitions),
        stages=stages,
        retry=retry,
        retry_wait_state="RETRY_WAIT",
        cancellable_states=frozenset(cancellable),
        deferred_cancel_states=frozenset({"EXECUTING_ACTION"}),
        parallel=parallel,
        timers=(
            TimerSpec(
                kind="approval",
                state="AWAITING_APPROVAL",
                event="APPROVAL_EXPIRED",
                delay_param="approval_sla_seconds",
            ),
            TimerSpec(kind="deadline", event="DEADLINE_EXCEEDED", delay_param="deadline_seconds"),
        ),
        data_updates=DATA,
        announcements=ANNOUNCEMENTS,
        gates=(
            Gate(state="EXECUTING_ACTION", events=("APPROVED",), guard="approval_valid"),
            Gate(state="AWAITING_APPROVAL", events=("POLICY_VALID",), guard="validation_current"),
        ),
        parameters=PARAMETERS,
    )


SUPPORT_V1 = _definition(1, parallel_evidence=False)
SUPPORT_V2 = _definition(2, parallel_evidence=True)
