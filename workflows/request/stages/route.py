"""route and bind_approval: the two stages that can authorise an effect.

`route` applies the routing policy to the recorded classification: blocked, sent for a
human approval, or authorised outright. `bind_approval` turns an accepted approval into an
authorisation of exactly the approved operation. Both submit `EFFECT_AUTHORIZED` with an
`Authorization` whose `authorization_id` is that result's own event id, so the effect
ledger can point at the audit row that authorised it; the definition's guards check the
payload against the record again before the workflow may enter `executing`.
"""

from __future__ import annotations

from dataclasses import dataclass

from interlock.contracts.envelope import Envelope
from interlock.contracts.ids import result_event_id
from interlock.contracts.jobs import JobPayload
from interlock.services.runtime.stage import StageResult
from interlock.workflows.request.stages.policy import (
    POLICY_VERSION,
    ROUTES,
    checks,
    revalidate,
    verdict,
)


@dataclass(frozen=True)
class RouteRequest:
    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        inputs = job.inputs
        decision, errors = revalidate((inputs.get("classification") or {}).get("decision"))
        if decision is None:
            return StageResult(
                "CLASSIFICATION_INVALID",
                {"errors": errors, "versions": {"policy": POLICY_VERSION}},
            )
        request = inputs["request"]
        report = checks(request, decision)
        outcome = verdict(report, decision)
        if outcome == "authorized":
            return _authorize(
                job,
                "route",
                effect=decision.requested_effect,
                route=decision.recommended_route,
                fingerprint=inputs["normalization"]["fingerprint"],
                workflow_version=inputs["versions"]["workflow"],
            )
        return StageResult(
            "ROUTE_BLOCKED" if outcome == "blocked" else "ROUTED_FOR_APPROVAL",
            {
                "outcome": outcome,
                "route": ROUTES[request["request_type"]],
                "effect": decision.requested_effect,
                "policy_version": POLICY_VERSION,
                "checks": [c.model_dump(mode="json") for c in report],
                "versions": {"policy": POLICY_VERSION},
            },
        )


@dataclass(frozen=True)
class BindApproval:
    """Binds the accepted approval to the routed operation; refuses one that no longer
    names the current policy or the routed effect (the approval went stale in between)."""

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        inputs = job.inputs
        approval, route = inputs["approval"], inputs["route"]
        if approval["policy_version"] != POLICY_VERSION or approval["effect"] != route["effect"]:
            return StageResult("PERMANENT_ERROR", {"error_class": "approval_not_bindable"})
        return _authorize(
            job,
            "approval",
            effect=route["effect"],
            route=route["route"],
            fingerprint=inputs["normalization"]["fingerprint"],
            workflow_version=approval["workflow_version"],
        )


def _authorize(
    job: JobPayload, basis: str, *, effect: str, route: str, fingerprint: str, workflow_version: str
) -> StageResult:
    return StageResult(
        "EFFECT_AUTHORIZED",
        {
            "authorization_id": result_event_id(job.job_id),
            "basis": basis,
            "effect": effect,
            "route": route,
            "fingerprint": fingerprint,
            "versions": {"workflow": workflow_version, "policy": POLICY_VERSION},
        },
    )
