"""route and bind_approval: the two stages that can authorise an effect.

`route` applies the routing policy to the recorded classification: blocked, sent for a
human approval, or authorised outright. `bind_approval` turns an accepted approval into an
authorisation of exactly the approved operation. Both submit `EFFECT_AUTHORIZED` with an
`Authorization` whose `authorization_id` is that result's own event id, so the effect
ledger can point at the audit row that authorised it; the definition's guards check the
payload against the record again before the workflow may enter `executing`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from interlock import StageContext, stage
from interlock.workflows.request.payloads import Approval, Normalization, RouteDecision
from interlock.workflows.request.results import (
    Authorized,
    ClassificationInvalid,
    Refused,
    RouteBlocked,
    RoutedForApproval,
)
from interlock.workflows.request.stages.policy import (
    POLICY_VERSION,
    ROUTES,
    checks,
    revalidate,
    verdict,
)


class RouteInputs(BaseModel):
    request: dict[str, Any]
    classification: dict[str, Any] | None = None
    """As recorded: its decision is revalidated here, never trusted."""
    normalization: Normalization
    versions: dict[str, str]


@stage(
    "route",
    reads=RouteInputs,
    emits=(Authorized, RouteBlocked, RoutedForApproval, ClassificationInvalid),
)
async def route(
    job: RouteInputs, ctx: StageContext
) -> Authorized | RouteBlocked | RoutedForApproval | ClassificationInvalid:
    decision, errors = revalidate((job.classification or {}).get("decision"))
    if decision is None:
        return ClassificationInvalid(errors=errors, versions={"policy": POLICY_VERSION})
    report = checks(job.request, decision)
    outcome = verdict(report, decision)
    if outcome == "authorized":
        return _authorize(
            ctx,
            "route",
            effect=decision.requested_effect,
            route=decision.recommended_route,
            fingerprint=job.normalization.fingerprint,
            workflow_version=job.versions["workflow"],
        )
    routed = RouteBlocked if outcome == "blocked" else RoutedForApproval
    return routed(
        outcome=outcome,
        route=ROUTES[job.request["request_type"]],
        effect=decision.requested_effect,
        policy_version=POLICY_VERSION,
        checks=report,
        versions={"policy": POLICY_VERSION},
    )


class BindInputs(BaseModel):
    route: RouteDecision
    approval: Approval
    normalization: Normalization


@stage("bind_approval", reads=BindInputs, emits=(Authorized, Refused))
async def bind_approval(job: BindInputs, ctx: StageContext) -> Authorized | Refused:
    """Binds the accepted approval to the routed operation; refuses one that no longer
    names the current policy or the routed effect (the approval went stale in between)."""
    approval, routed = job.approval, job.route
    if approval.policy_version != POLICY_VERSION or approval.effect != routed.effect:
        return Refused(error_class="approval_not_bindable")
    return _authorize(
        ctx,
        "approval",
        effect=routed.effect,
        route=routed.route,
        fingerprint=job.normalization.fingerprint,
        workflow_version=approval.workflow_version,
    )


def _authorize(
    ctx: StageContext,
    basis: str,
    *,
    effect: str,
    route: str,
    fingerprint: str,
    workflow_version: str,
) -> Authorized:
    return Authorized.model_validate(
        {
            "authorization_id": ctx.result_event_id,
            "basis": basis,
            "effect": effect,
            "route": route,
            "fingerprint": fingerprint,
            "versions": {"workflow": workflow_version, "policy": POLICY_VERSION},
        }
    )
