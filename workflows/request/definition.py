"""The `request` workflow: validate, normalise, enrich, classify (one bounded
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

Version 2 declares the effect and what each outcome promises about it: an effect whose
outcome is unknown (the stage escalated from `executing`) waits in `review` with its
idempotency key instead of failing, and an operator confirms the receipt found at the
provider or runs the effect again under the same key. Version 3 (`recovery`) refuses an
out-of-order `EXECUTE_REQUESTED` without mutation instead of failing the run, lets an
operator cancel a run before its effect, and compensates an effect (looked up by its key
first when its outcome is unknown).
"""

from __future__ import annotations

from interlock import CONFIRM_EVENT, Empty, ErrorReport, Escalation, Retry, Timer, TimerFired
from interlock.contracts.definition import DataUpdate, EventSpec, Gate, Stage
from interlock.definition import Announcement, HumanWait, WorkflowDefinition
from interlock.workflows.request import payloads as rp
from interlock.workflows.request import recovery as rec
from interlock.workflows.request.table import PRE_APPROVAL

TERMINAL = frozenset({"completed", "blocked", "failed"})
STATES = (*PRE_APPROVAL, "approved", "executing", *sorted(TERMINAL))
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
            ("RETRYABLE_ERROR", ErrorReport),
            ("PERMANENT_ERROR", ErrorReport),
            ("ESCALATE", Escalation),
        )
    ),
    EventSpec(name="APPROVED", source="signal", payload=rp.Approval),
    EventSpec(name="RESUME", source="signal", payload=Empty),
    EventSpec(name="EXECUTE_REQUESTED", source="signal", payload=Empty),
    EventSpec(name="RETRY_DUE", source="timer", payload=TimerFired),
    EventSpec(name="APPROVAL_EXPIRED", source="timer", payload=TimerFired),
)

STAGES = {
    "received": Stage(
        name="validate",
        inputs=("request",),
        emits=("REQUEST_VALIDATED", "REQUEST_UNSUPPORTED"),
    ),
    "validated": Stage(name="normalize", inputs=("request",), emits=("REQUEST_NORMALIZED",)),
    "normalized": Stage(name="enrich", inputs=("request",), emits=("REQUEST_ENRICHED",)),
    "enriched": Stage(
        name="classify_request",
        inputs=("request", "evidence"),
        emits=("REQUEST_CLASSIFIED", "CLASSIFICATION_INVALID"),
        model=True,
    ),
    "classified": Stage(
        name="route",
        inputs=("request", "classification", "normalization", "versions"),
        emits=(
            "CLASSIFICATION_INVALID",
            "EFFECT_AUTHORIZED",
            "ROUTE_BLOCKED",
            "ROUTED_FOR_APPROVAL",
        ),
    ),
    "approved": Stage(
        name="bind_approval",
        inputs=("route", "approval", "normalization", "versions"),
        emits=("EFFECT_AUTHORIZED",),
    ),
    "executing": Stage(
        name="execute_effect", inputs=("authorization",), emits=("EFFECT_EXECUTED",)
    ),
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
"""The approval contract's version: what an approver consents to is the same in every
definition version so far (version 2 changed only what follows an unknown effect)."""


def workflow_version(definition_version: int) -> str:
    """The version label a run records and an approval must name (`workflow-1`)."""
    return f"workflow-{definition_version}"


PARAMETERS = {
    "versions": {"workflow": workflow_version(VERSION), "normalization": rp.NORMALIZATION_VERSION},
    "max_classifier_attempts": 2,
    "retry_delay_scale": 1.0,
    "approval_sla_seconds": 24 * 3600.0,
    "approval_required_effects": list(rp.APPROVAL_EFFECTS),
    "approver_roles": ["request_approver", "operator"],
    "operator_roles": ["operator"],
    # waits on a person: announced again after the deadline, then every reminder period
    "approval_reminder_after_seconds": 8 * 3600.0,
    "approval_reminder_seconds": 4 * 3600.0,
    "review_deadline_seconds": 4 * 3600.0,
    "review_reminder_seconds": 4 * 3600.0,
}


REVIEW = rec.REVIEW


APPROVAL_WAIT = HumanWait(
    state="approval_required",
    owner_role="request_approver",
    deadline_param="approval_reminder_after_seconds",
    reminder_every_param="approval_reminder_seconds",
)
REVIEW_WAIT = HumanWait(
    state=REVIEW,
    owner_role="operator",
    deadline_param="review_deadline_seconds",
    reminder_every_param="review_reminder_seconds",
)


def _definition(version: int) -> WorkflowDefinition:
    recovering = version >= 2
    v3 = version >= 3
    states = (*STATES, REVIEW) if recovering else STATES
    events = (*EVENTS, *rec.RECOVERY_EVENTS_V2) if recovering else EVENTS
    stages = STAGES
    data = {**DATA, CONFIRM_EVENT: DataUpdate(key="effect")} if recovering else DATA
    if v3:
        states, events = (*STATES, *rec.NEW_STATES), (*EVENTS, *rec.RECOVERY_EVENTS_V3)
        stages = {**STAGES, rec.COMPENSATING: rec.COMPENSATE_STAGE}
        data = {**DATA, **rec.DATA_V3}
    return WorkflowDefinition(
        workflow_type="request",
        version=version,
        description=__doc__ or "",
        states=states,
        initial_state="received",
        terminal_states=TERMINAL | rec.NEW_TERMINALS if v3 else TERMINAL,
        waiting_states=frozenset({"approval_required", *([REVIEW] if recovering else [])}),
        effect_states=frozenset({"executing"}),
        review_state=REVIEW if recovering else None,
        events=events,
        effects=((rec.EFFECT_V3 if v3 else rec.EFFECT_V2),) if recovering else (),
        terminals=(rec.PROMISES_V3 if v3 else rec.PROMISES_V2) if recovering else (),
        transitions=tuple(rec.rows(version)),
        stages=stages,
        # A classifier retry waits in `enriched` itself (the table has no waiting state for
        # it): the backoff timer is scoped there, so leaving `enriched` cancels it.
        retry_wait_state="enriched",
        retry={
            "enriched": Retry(
                max_attempts=2,
                max_attempts_param="max_classifier_attempts",
                base_seconds=1.0,
                cap_seconds=30.0,
            )
        },
        timers=(
            Timer(
                kind="approval",
                state="approval_required",
                event="APPROVAL_EXPIRED",
                delay_param="approval_sla_seconds",
            ),
        ),
        data_updates=data,
        announcements=(*ANNOUNCEMENTS, *rec.ANNOUNCEMENTS_V3) if v3 else ANNOUNCEMENTS,
        gates=(Gate(state="executing", events=("EFFECT_AUTHORIZED",), guard="payload_matches"),),
        human_waits=(APPROVAL_WAIT, *([REVIEW_WAIT] if recovering else [])),
        parameters=PARAMETERS,
    )


REQUEST_V1 = _definition(1)
REQUEST_V2 = _definition(2)
REQUEST_V3 = _definition(3)
