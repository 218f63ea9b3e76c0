"""generate_recommendation: the model proposes an action; nothing here authorises it.

The proposal is checked only for shape (a closed set of action types, a decimal amount).
Whether it is allowed is the deterministic policy check's job (`validate_policy`), and
whether it happens is a human approver's.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from interlock import (
    Currency,
    ModelOutputInvalid,
    ModelRequest,
    StageContext,
    ask,
    output_schema,
    stage,
)
from interlock.workflows.support.payloads import ActionType
from interlock.workflows.support.ports import MODEL
from interlock.workflows.support.prompts import SUPPORT_RECOMMEND_V1
from interlock.workflows.support.results import OutputInvalid, Recommended


class RecommenderOutput(BaseModel):
    """What the model must return; every field required, nothing else allowed. The amount
    is a decimal string so the schema has one type (strict JSON-schema output)."""

    model_config = ConfigDict(extra="forbid")

    action_type: ActionType
    amount: str = Field(pattern=r"^\d{1,12}(\.\d{1,2})?$")
    currency: Currency
    rationale: str = Field(max_length=2000)
    evidence_refs: list[str] = Field(max_length=20)


class RecommendInputs(BaseModel):
    """The evidence as recorded: the model gets it as the workflow holds it."""

    request: dict[str, Any]
    classification: dict[str, Any]
    policy: dict[str, Any]
    account: dict[str, Any]
    revision_feedback: dict[str, Any] | None = None
    invalid_model_output: ModelOutputInvalid | None = None


@stage(
    "generate_recommendation",
    reads=RecommendInputs,
    emits=(Recommended, OutputInvalid),
    ports=(MODEL,),
    system="model",
)
async def recommend(job: RecommendInputs, ctx: StageContext) -> Recommended | OutputInvalid:
    answer = await ask(
        ctx.port(MODEL),
        ModelRequest(
            task="recommend",
            prompt_version=SUPPORT_RECOMMEND_V1,
            inputs={
                "request": job.request,
                "classification": _without_call(job.classification),
                "policy": job.policy,
                "account": job.account,
                "revision_feedback": job.revision_feedback,
            },
            output_schema=output_schema(RecommenderOutput),
            case_key=ctx.correlation_id,
            attempt=ctx.attempt,
        ),
        RecommenderOutput,
        ctx,
        invalid=job.invalid_model_output.call if job.invalid_model_output else None,
    )
    if answer.value is None:
        return OutputInvalid(call=answer.call)
    return Recommended(**answer.value.model_dump(), call=answer.call)


def _without_call(artifact: dict[str, Any]) -> dict[str, Any]:
    """Model context gets the artifact, not the record of how it was produced."""
    return {k: v for k, v in artifact.items() if k != "call"}
