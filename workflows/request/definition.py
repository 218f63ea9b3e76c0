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
provider or runs the effect again under the same key.
"""

from __future__ import annotations

from interlock import (
    CONFIRM_EVENT,
    RERUN_EVENT,
    Announcement,
    Effect,
    Empty,
    ErrorReport,
    Escalation,
    Retry,
    Terminal,
    Timer,
    TimerFired,
    Transition,
    WorkflowDefinition,
    effect_is,
)
from interlock.contracts.definition import DataUpdate, EventSpec, Gate, HumanWait, Stage
from interlock.workflows.request import payloads as rp
from interlock.workflows.request.table import OPERATOR, PRE_APPROVAL, flow_rows, recovery_rows

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


REVIEW = "review"
UNKNOWN = effect_is("executing", "unknown")
EFFECT = Effect(state="executing", committed=("EFFECT_EXECUTED",), confirmed=(CONFIRM_EVENT,))
PROMISES = (
    Terminal(state="completed", effects="done"),
    Terminal(state="blocked", effects="none"),
    Terminal(state="failed", effects="none"),
)


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


def _review_rows() -> list[Transition]:
    """An unknown outcome waits for an operator, holding the key to check first."""
    return [
        Transition(source="executing", event="ESCALATE", target=REVIEW, reason="escalated"),
        Transition(
            source=REVIEW, event=CONFIRM_EVENT, target="completed", guards=(OPERATOR, UNKNOWN)
        ),
        Transition(
            source=REVIEW, event=RERUN_EVENT, target="executing", guards=(OPERATOR, UNKNOWN)
        ),
    ]


def _definition(version: int) -> WorkflowDefinition:
    recovering = version >= 2
    rows = [*flow_rows(), *recovery_rows()]
    if recovering:
        rows = [r for r in rows if (r.source, r.event) != ("executing", "ESCALATE")]
        rows += _review_rows()
    recovery_events = (
        EventSpec(name=CONFIRM_EVENT, source="signal", payload=rp.EffectDone),
        EventSpec(name=RERUN_EVENT, source="signal", payload=Empty),
    )
    return WorkflowDefinition(
        workflow_type="request",
        version=version,
        description=__doc__ or "",
        states=(*STATES, REVIEW) if recovering else STATES,
        initial_state="received",
        terminal_states=TERMINAL,
        waiting_states=frozenset({"approval_required", *([REVIEW] if recovering else [])}),
        effect_states=frozenset({"executing"}),
        review_state=REVIEW if recovering else None,
        events=(*EVENTS, *recovery_events) if recovering else EVENTS,
        effects=(EFFECT,) if recovering else (),
        terminals=PROMISES if recovering else (),
        transitions=tuple(rows),
        stages=STAGES,
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
        data_updates={**DATA, CONFIRM_EVENT: DataUpdate(key="effect")} if recovering else DATA,
        announcements=ANNOUNCEMENTS,
        gates=(Gate(state="executing", events=("EFFECT_AUTHORIZED",), guard="payload_matches"),),
        human_waits=(APPROVAL_WAIT, *([REVIEW_WAIT] if recovering else [])),
        parameters=PARAMETERS,
    )


REQUEST_V1 = _definition(1)
REQUEST_V2 = _definition(2)
