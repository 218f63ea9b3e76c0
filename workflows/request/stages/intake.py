"""validate, normalize and enrich: deterministic intake, no model and no network.

The transport contract (keys, types, closed enums) was enforced at the projector's door;
these stages decide what the door cannot: whether the workflow performs the requested
action, the request's canonical fingerprint, and local evidence for the classifier.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from interlock import StageContext, fingerprint, stage
from interlock.workflows.request.payloads import EFFECTS, NORMALIZATION_VERSION, normalize
from interlock.workflows.request.results import Enriched, Normalized, Unsupported, Validated


class Asked(BaseModel):
    """The fields of the recorded request the intake decides on."""

    requested_action: str
    account_tier: str


class IntakeInputs(BaseModel):
    request: Asked


@stage("validate", reads=IntakeInputs, emits=(Validated, Unsupported))
async def validate(job: IntakeInputs, ctx: StageContext) -> Validated | Unsupported:
    """Eligibility: the requested action must be on the workflow's allowlist."""
    action = job.request.requested_action
    if action in EFFECTS:
        return Validated.model_validate({"requested_action": action})
    return Unsupported.model_validate({"requested_action": action, "allowed": list(EFFECTS)})


class RecordedRequest(BaseModel):
    request: dict[str, Any]
    """As recorded: an older record keeps fields the canonical form may not know."""


@stage("normalize", reads=RecordedRequest, emits=(Normalized,))
async def normalize_request(job: RecordedRequest, ctx: StageContext) -> Normalized:
    """Records the fingerprint of the canonical request and the rules that made it so.

    The request was normalised at the door (the same pure function); applying it again is
    a no-op for a current run and brings an older record to the canonical form.
    """
    canonical = normalize(job.request)
    return Normalized(
        fingerprint=fingerprint(canonical), normalization_version=NORMALIZATION_VERSION
    )


@stage("enrich", reads=IntakeInputs, emits=(Enriched,))
async def enrich(job: IntakeInputs, ctx: StageContext) -> Enriched:
    """Local evidence only: whether the account is on the priority tier."""
    return Enriched(priority=job.request.account_tier == "priority")
