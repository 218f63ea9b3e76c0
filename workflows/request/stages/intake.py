"""validate, normalize and enrich: deterministic intake, no model and no network.

The transport contract (keys, types, closed enums) was enforced at the projector's door;
these stages decide what the door cannot: whether the workflow performs the requested
action, the request's canonical fingerprint, and local evidence for the classifier.
"""

from __future__ import annotations

from dataclasses import dataclass

from interlock.contracts.envelope import Envelope
from interlock.contracts.ids import fingerprint
from interlock.contracts.jobs import JobPayload
from interlock.services.runtime.stage import StageResult
from interlock.workflows.request.payloads import EFFECTS, NORMALIZATION_VERSION, normalize


@dataclass(frozen=True)
class Validate:
    """Eligibility: the requested action must be on the workflow's allowlist."""

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        action = job.inputs["request"]["requested_action"]
        if action in EFFECTS:
            return StageResult("REQUEST_VALIDATED", {"requested_action": action})
        return StageResult(
            "REQUEST_UNSUPPORTED", {"requested_action": action, "allowed": list(EFFECTS)}
        )


@dataclass(frozen=True)
class Normalize:
    """Records the fingerprint of the canonical request and the rules that made it so.

    The request was normalised at the door (the same pure function); applying it again is
    a no-op for a current run and brings an older record to the canonical form.
    """

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        canonical = normalize(job.inputs["request"])
        return StageResult(
            "REQUEST_NORMALIZED",
            {"fingerprint": fingerprint(canonical), "normalization_version": NORMALIZATION_VERSION},
        )


@dataclass(frozen=True)
class Enrich:
    """Local evidence only: whether the account is on the priority tier."""

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        tier = job.inputs["request"]["account_tier"]
        return StageResult("REQUEST_ENRICHED", {"priority": tier == "priority"})
