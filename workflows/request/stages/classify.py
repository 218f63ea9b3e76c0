"""classify_request: the one bounded model call. The model proposes; nothing here decides.

The proposal must fit a closed schema — exactly `category`, `recommended_route`,
`requested_effect`, `reason_code`, each from its allowlist — or the run fails with
`classification_invalid` (a bad proposal is not retried: asking again is not a fix). A
timeout or outage is a `RETRYABLE_ERROR`, retried durably by the definition's policy. The
call (model, versions, output, verdict) is recorded, so a resumed run reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.contracts.payloads import ModelCall
from interlock.services.ports import ModelClient, ModelRequest, output_schema
from interlock.services.runtime.stage import StageResult
from interlock.workflows.request.payloads import RoutingProposal
from interlock.workflows.request.prompts import REQUEST_CLASSIFY_V1
from interlock.workflows.support.stages.modelnode import ask

MODEL_FIELDS = ("source", "request_type", "subject", "body", "account_tier", "requested_action")


@dataclass(frozen=True)
class ClassifyRequest:
    model: ModelClient

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        request = job.inputs["request"]
        inputs: dict[str, Any] = {k: request[k] for k in MODEL_FIELDS}
        inputs["priority"] = (job.inputs.get("evidence") or {}).get("priority", False)
        proposal = await ask(
            self.model,
            job,
            ModelRequest(
                task="classify_request",
                prompt_version=REQUEST_CLASSIFY_V1,
                inputs=inputs,
                output_schema=output_schema(RoutingProposal),
                case_key=envelope.correlation_id,
                attempt=job.attempt,
            ),
            RoutingProposal,
            invalid=_invalid,
        )
        if isinstance(proposal, StageResult):
            return proposal
        return StageResult(
            "REQUEST_CLASSIFIED",
            {
                "decision": proposal.value,
                "call": proposal.call.model_dump(mode="json"),
                "versions": versions(proposal.call),
            },
        )


def versions(call: ModelCall) -> dict[str, str]:
    return {"classifier": call.model_version or call.model, "prompt": call.prompt_version}


def _invalid(call: ModelCall) -> StageResult:
    return StageResult(
        "CLASSIFICATION_INVALID",
        {"errors": call.errors, "call": call.model_dump(mode="json"), "versions": versions(call)},
    )
