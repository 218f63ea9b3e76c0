"""The `support` workflow: classify, gather evidence, recommend, validate,
approve, act, notify — with retries, escalation, cancellation and compensation.

Version 1 is the sequential table (17 states). Version 2 gathers policy and account
evidence in parallel branches joined before the recommendation; everything else is the same.
Version 3 is version 2 with its effects declared and its terminals' promises proven
(`recovery`): after the refund, a cancellation compensates and a rejection is refused, a
resolved review sends the notification, and an unknown outcome is confirmed, re-run under the
same key, or compensated. All stay executable: a workflow keeps the definition version it
started with (`interlock migrate-workflow` moves one on).
"""

from __future__ import annotations

from interlock import CONFIRM_EVENT, Retry, Timer
from interlock.contracts import rules
from interlock.contracts.definition import DataUpdate, Gate, Stage
from interlock.definition import (
    Announcement,
    Branch,
    HumanWait,
    Parallel,
    Transition,
    WorkflowDefinition,
)
from interlock.workflows.support import recovery
from interlock.workflows.support.events import EVENTS, RECOVERY_EVENTS
from interlock.workflows.support.table import REVIEW, core_rows

T = Transition
PRE_EFFECT = (
    "CLASSIFYING",
    "RETRIEVING_POLICY",
    "INSPECTING_ACCOUNT",
    "GENERATING_RECOMMENDATION",
    "VALIDATING_POLICY",
)
TERMINAL = frozenset({"COMPLETED", "REJECTED", "CANCELLED", "FAILED", "FAILED_COMPENSATED"})


RETRY = {
    "CLASSIFYING": Retry(max_attempts=2),
    "RETRIEVING_POLICY": Retry(max_attempts=3),
    "INSPECTING_ACCOUNT": Retry(max_attempts=4),
    "GENERATING_RECOMMENDATION": Retry(max_attempts=2),
    "VALIDATING_POLICY": Retry(max_attempts=3),
    "NOTIFYING_CUSTOMER": Retry(max_attempts=5),
}

STAGES = {
    "CLASSIFYING": Stage(
        name="classify",
        inputs=("request", "invalid_model_output"),
        emits=("CLASSIFICATION_SUCCEEDED", "MODEL_OUTPUT_INVALID"),
        model=True,
    ),
    "RETRIEVING_POLICY": Stage(
        name="retrieve_policy", inputs=("request", "classification"), emits=("POLICY_RETRIEVED",)
    ),
    "INSPECTING_ACCOUNT": Stage(
        name="inspect_account", inputs=("request",), emits=("ACCOUNT_INSPECTED",)
    ),
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
        emits=("RECOMMENDATION_GENERATED", "MODEL_OUTPUT_INVALID"),
        model=True,
    ),
    "VALIDATING_POLICY": Stage(
        name="validate_policy",
        inputs=("request", "recommendation", "recommendation_version", "policy", "account"),
        emits=("POLICY_VALID", "POLICY_INVALID", "POLICY_UNCLEAR"),
    ),
    "EXECUTING_ACTION": Stage(
        name="execute_action",
        inputs=("request", "recommendation", "recommendation_version", "approval"),
        emits=("ACTION_EXECUTED", "POST_ACTION_INVARIANT_FAILED"),
    ),
    "NOTIFYING_CUSTOMER": Stage(
        name="notify_customer", inputs=("request", "action"), emits=("CUSTOMER_NOTIFIED",)
    ),
    "COMPENSATING": Stage(
        name="compensate",
        inputs=("action", "recommendation_version"),
        emits=("COMPENSATION_SUCCEEDED", "COMPENSATION_FAILED"),
    ),
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
    # waits on a person: announced again after the deadline, then every reminder period
    "approval_reminder_after_seconds": 8 * 3600.0,
    "approval_reminder_seconds": 4 * 3600.0,
    "review_deadline_seconds": 4 * 3600.0,
    "review_reminder_seconds": 4 * 3600.0,
}
HUMAN_WAITS = (
    HumanWait(
        state="AWAITING_APPROVAL",
        owner_role="support_approver",
        deadline_param="approval_reminder_after_seconds",
        reminder_every_param="approval_reminder_seconds",
    ),
    HumanWait(
        state=REVIEW,
        owner_role="support_supervisor",
        deadline_param="review_deadline_seconds",
        reminder_every_param="review_reminder_seconds",
    ),
)


def _definition(
    version: int, parallel_evidence: bool, effect_aware: bool = False
) -> WorkflowDefinition:
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
    after_effect = ("RETRY_WAIT", REVIEW) if effect_aware else ()
    rows = core_rows(entry, evidence_rows)
    if effect_aware:
        rows = [r for r in rows if (r.source, r.event) not in recovery.REPLACED]
        rows += recovery.review_rows() + recovery.cancellation_rows(after_effect, "CANCELLED")
    transitions = [
        *rows,
        *rules.retries(retry, wait_state="RETRY_WAIT", exhausted_target=REVIEW),
        *rules.cancellation(
            [s for s in cancellable if s not in after_effect],
            deferred=["EXECUTING_ACTION"],
            target="CANCELLED",
        ),
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
        events=(*EVENTS, *RECOVERY_EVENTS) if effect_aware else EVENTS,
        transitions=tuple(transitions),
        stages=stages,
        retry=retry,
        retry_wait_state="RETRY_WAIT",
        cancellable_states=frozenset(cancellable),
        deferred_cancel_states=frozenset({"EXECUTING_ACTION"}),
        parallel=parallel,
        timers=(
            Timer(
                kind="approval",
                state="AWAITING_APPROVAL",
                event="APPROVAL_EXPIRED",
                delay_param="approval_sla_seconds",
            ),
            Timer(kind="deadline", event="DEADLINE_EXCEEDED", delay_param="deadline_seconds"),
        ),
        # the receipt an operator found at the provider is the action on record
        data_updates={**DATA, CONFIRM_EVENT: DataUpdate(key="action")} if effect_aware else DATA,
        announcements=ANNOUNCEMENTS,
        human_waits=HUMAN_WAITS,
        gates=(
            Gate(state="EXECUTING_ACTION", events=("APPROVED",), guard="approval_valid"),
            Gate(state="AWAITING_APPROVAL", events=("POLICY_VALID",), guard="validation_current"),
        ),
        effects=recovery.EFFECTS if effect_aware else (),
        terminals=recovery.TERMINALS if effect_aware else (),
        parameters=PARAMETERS,
    )


SUPPORT_V1 = _definition(1, parallel_evidence=False)
SUPPORT_V2 = _definition(2, parallel_evidence=True)
SUPPORT_V3 = _definition(3, parallel_evidence=True, effect_aware=True)
