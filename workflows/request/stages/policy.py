"""The deterministic routing policy (`policy-1`): pure functions, no I/O, no model.

A classifier's decision is a recommendation. It is read back from the checkpoint and
revalidated here (schema and allowlists) before anything uses it — a resumed run trusts
its record no more than a fresh answer — and then it must agree with the request: the
category is the request's type, the route is that type's route in `ROUTES`, the effect is
the action the request asked for. Any disagreement blocks the run (an injection-like
request that talks the model into another category or effect gets no further).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ValidationError

from interlock import PolicyCheck, summarise
from interlock.workflows.request.payloads import APPROVAL_EFFECTS, Route, RoutingProposal

POLICY_VERSION = "policy-1"
ROUTES: dict[str, Route] = {
    "support": "service_desk",
    "billing": "finance",
    "sales": "commercial",
    "security": "security_review",
}
Verdict = Literal["blocked", "approval_required", "authorized"]


def revalidate(recorded: Any) -> tuple[RoutingProposal | None, list[str]]:
    """The recorded decision if it still fits the closed schema, else the errors."""
    try:
        return RoutingProposal.model_validate(recorded), []
    except ValidationError as exc:
        return None, [summarise(exc)]


def checks(request: Mapping[str, Any], decision: RoutingProposal) -> list[PolicyCheck]:
    """Every consistency check between the decision and the normalised request."""
    route = ROUTES.get(str(request["request_type"]))
    return [
        PolicyCheck(
            name="category_matches_request",
            passed=decision.category == request["request_type"],
            detail=f"{decision.category} == {request['request_type']}",
        ),
        PolicyCheck(
            name="route_matches_policy",
            passed=decision.recommended_route == route,
            detail=f"{decision.recommended_route} == {route}",
        ),
        PolicyCheck(
            name="effect_matches_request",
            passed=decision.requested_effect == request["requested_action"],
            detail=f"{decision.requested_effect} == {request['requested_action']}",
        ),
    ]


def verdict(report: list[PolicyCheck], decision: RoutingProposal) -> Verdict:
    if not all(check.passed for check in report):
        return "blocked"
    if decision.requested_effect in APPROVAL_EFFECTS:
        return "approval_required"
    return "authorized"
