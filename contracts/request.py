"""The `request` workflow of seed 001: validate, normalise, enrich, classify (one bounded
model call), route by deterministic policy, optionally bind a human approval, execute one
idempotent effect.

The model only proposes. Whether anything happens is decided here and in the routing
policy: `executing`, the only state with an external effect, is entered only by an
`EFFECT_AUTHORIZED` whose payload matches the record — from `classified` when the route is
authorised and the effect needs no approval, from `approved` when a fresh approval is bound
to the operation. The graph check proves no path reaches `executing` any other way.

Failure rows name their reason, so a failed run says what failed: `unsupported_request`,
`classification_invalid`, `retry_exhausted`, `approval_stale`, `approval_expired`,
`state_conflict`, `permanent_error`, `escalated`, `effect_failed`.
"""

from __future__ import annotations

from contracts import payloads as p
from contracts import request_payloads as rp
from contracts.definition import (
    Announcement,
    DataUpdate,
    EventSpec,
    Gate,
    Guard,
    RetryPolicy,
    Stage,
    TimerSpec,
    Transition,
    WorkflowDefinition,
)
from contracts.rules import RETRYABLE_ERROR, edges

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
TERMINAL = frozenset({"completed", "blocked", "failed"})
STATES = (*PRE_APPROVAL, "approved", "executing", *sorted(TERMINAL))
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

EVENTS = (
    EventSpec(name="START", source="request", payload=rp.InboundRequest),
    *(
        EventSpec(name=name, source="result", answers_job=True, payload=model)
        for name, model in (
            ("REQUEST_VALIDATED", rp.Eligibility),
            ("REQUEST_UNSUPPORTED", rp.Ineligible),
            ("REQUEST_NORMALIZED", rp.Normalization),
            ("REQUEST_ENRICHED", rp.Evidence),
            ("REQUEST_CLASSIFIED", rp.Classification),
            ("CLASSIFICATION_INVALID", rp.ClassificationRejected),
            ("ROUTE_BLOCKED", rp.RouteDecision),
            ("ROUTED_FOR_APPROVAL", rp.RouteDecision),
            ("EFFECT_AUTHORIZED", rp.Authorization),
            ("EFFECT_EXECUTED", rp.EffectDone),
            ("RETRYABLE_ERROR", p.ErrorReport),
            ("PERMANENT_ERROR", p.ErrorReport),
            ("ESCALATE", p.Escalation),
        )
    ),
    EventSpec(name="APPROVED", source="signal", payload=rp.Approval),
    EventSpec(name="RESUME", source="signal", payload=p.Empty),
    EventSpec(name="EXECUTE_REQUESTED", source="signal", payload=p.Empty),
    EventSpec(name="RETRY_DUE", source="timer", payload=p.TimerFired),
    EventSpec(name="APPROVAL_EXPIRED", source="timer", payload=p.TimerFired),
)

STAGES = {
    "received": Stage(name="validate", inputs=("request",)),
    "validated": Stage(name="normalize", inputs=("request",)),
    "normalized": Stage(name="enrich", inputs=("request",)),
    "enriched": Stage(name="classify_request", inputs=("request", "evidence")),
    "classified": Stage(
        name="route", inputs=("request", "classification", "normalization", "versions")
    ),
    "approved": Stage(
        name="bind_approval", inputs=("route", "approval", "normalization", "versions")
    ),
    "executing": Stage(name="execute_effect", inputs=("authorization",)),
}

DATA = {
    "START": DataUpdate(key="request"),
    "REQUEST_VALIDATED": DataUpdate(key="eligibility"),
    "REQUEST_UNSUPPORTED": DataUpdate(key="eligibility"),
    "REQUEST_NORMALIZED": DataUpdate(key="normalization"),
    "REQUEST_ENRICHED": DataUpdate(key="evidence"),
    "REQUEST_CLASSIFIED": DataUpdate(key="classification"),
    "CLASSIFICATION_INVALID": DataUpdate(key="classification_rejected"),
    "ROUTE_BLOCKED": DataUpdate(key="route"),
    "ROUTED_FOR_APPROVAL": DataUpdate(key="route"),
    "APPROVED": DataUpdate(key="approval"),
    "EFFECT_AUTHORIZED": DataUpdate(key="authorization"),
    "EFFECT_EXECUTED": DataUpdate(key="effect"),
}

ANNOUNCEMENTS = (
    Announcement(
        state="approval_required",
        name="approval_requested",
        fields={
            "workflow_version": "versions.workflow",
            "policy_version": "versions.policy",
            "effect": "route.effect",
            "route": "route.route",
            "fingerprint": "normalization.fingerprint",
        },
        expiry_timer="approval",
    ),
    Announcement(
        state="completed",
        name="completed",
        fields={"effect": "effect", "authorization": "authorization", "versions": "versions"},
    ),
    Announcement(
        state="blocked", name="blocked", fields={"route": "route", "versions": "versions"}
    ),
    Announcement(state="failed", name="failed", fields={"versions": "versions"}),
)

VERSION = 1


def workflow_version(definition_version: int) -> str:
    """The version label a run records and an approval must name (`workflow-1`)."""
    return f"workflow-{definition_version}"


RECORD = "record_versions"
STAMP = "stamp_versions"


PARAMETERS = {
    "versions": {"workflow": workflow_version(VERSION), "normalization": rp.NORMALIZATION_VERSION},
    "max_classifier_attempts": 2,
    "retry_delay_scale": 1.0,
    "approval_sla_seconds": 24 * 3600.0,
    "approval_required_effects": list(rp.APPROVAL_EFFECTS),
    "approver_roles": ["request_approver", "operator"],
    "operator_roles": ["operator"],
}


def _flow() -> list[Transition]:
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


def _recovery() -> list[Transition]:
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


def _definition() -> WorkflowDefinition:
    return WorkflowDefinition(
        workflow_type="request",
        version=VERSION,
        description=__doc__ or "",
        states=STATES,
        initial_state="received",
        terminal_states=TERMINAL,
        waiting_states=frozenset({"approval_required"}),
        effect_states=frozenset({"executing"}),
        events=EVENTS,
        transitions=(*_flow(), *_recovery()),
        stages=STAGES,
        # A classifier retry waits in `enriched` itself (the seed has no waiting state for
        # it): the backoff timer is scoped there, so leaving `enriched` cancels it.
        retry_wait_state="enriched",
        retry={
            "enriched": RetryPolicy(
                max_attempts=2,
                max_attempts_param="max_classifier_attempts",
                base_seconds=1.0,
                cap_seconds=30.0,
            )
        },
        timers=(
            TimerSpec(
                kind="approval",
                state="approval_required",
                event="APPROVAL_EXPIRED",
                delay_param="approval_sla_seconds",
            ),
        ),
        data_updates=DATA,
        announcements=ANNOUNCEMENTS,
        gates=(Gate(state="executing", events=("EFFECT_AUTHORIZED",), guard="payload_matches"),),
        parameters=PARAMETERS,
    )


REQUEST_V1 = _definition()
