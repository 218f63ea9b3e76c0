"""classify_request: the one bounded model call. The model proposes; nothing here decides.

The proposal must fit a closed schema — exactly `category`, `recommended_route`,
`requested_effect`, `reason_code`, each from its allowlist — or the run fails with
`classification_invalid` (a bad proposal is not retried: asking again is not a fix). A
timeout or outage is a `RETRYABLE_ERROR`, retried durably by the definition's policy. The
call (model, versions, output, verdict) is recorded, so a resumed run reads it back.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from interlock import ModelCall, ModelRequest, StageContext, ask, output_schema, stage
from interlock.workflows.request.payloads import RoutingProposal
from interlock.workflows.request.ports import MODEL
from interlock.workflows.request.prompts import REQUEST_CLASSIFY_V1
from interlock.workflows.request.results import ClassificationInvalid, Classified

MODEL_FIELDS = ("source", "request_type", "subject", "body", "account_tier", "requested_action")


class ClassifyInputs(BaseModel):
    request: dict[str, Any]
    """As recorded: the model is given exactly `MODEL_FIELDS` of it."""
    evidence: dict[str, Any] | None = None


@stage(
    "classify_request",
    reads=ClassifyInputs,
    emits=(Classified, ClassificationInvalid),
    ports=(MODEL,),
    system="model",
)
async def classify_request(
    job: ClassifyInputs, ctx: StageContext
) -> Classified | ClassificationInvalid:
    inputs: dict[str, Any] = {k: job.request[k] for k in MODEL_FIELDS}
    inputs["priority"] = (job.evidence or {}).get("priority", False)
    answer = await ask(
        ctx.port(MODEL),
        ModelRequest(
            task="classify_request",
            prompt_version=REQUEST_CLASSIFY_V1,
            inputs=inputs,
            output_schema=output_schema(RoutingProposal),
            case_key=ctx.correlation_id,
            attempt=ctx.attempt,
        ),
        RoutingProposal,
        ctx,
    )
    if answer.value is None:
        return ClassificationInvalid(
            errors=answer.call.errors, call=answer.call, versions=versions(answer.call)
        )
    return Classified(decision=answer.value, call=answer.call, versions=versions(answer.call))


def versions(call: ModelCall) -> dict[str, str]:
    return {"classifier": call.model_version or call.model, "prompt": call.prompt_version}
