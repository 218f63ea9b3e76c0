"""generate_recommendation: the model proposes an action; nothing here authorises it.

The proposal is checked only for shape (a closed set of action types, a decimal amount).
Whether it is allowed is the deterministic policy check's job (`validate_policy`), and
whether it happens is a human approver's.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.contracts.payloads import Currency
from interlock.services.ports import ModelClient, ModelRequest, output_schema
from interlock.services.runtime.stage import StageResult
from interlock.workflows.support.payloads import ActionType
from interlock.workflows.support.prompts import SUPPORT_RECOMMEND_V1
from interlock.workflows.support.stages.modelnode import ask


class RecommenderOutput(BaseModel):
    """What the model must return; every field required, nothing else allowed. The amount
    is a decimal string so the schema has one type (strict JSON-schema output)."""

    model_config = ConfigDict(extra="forbid")

    action_type: ActionType
    amount: str = Field(pattern=r"^\d{1,12}(\.\d{1,2})?$")
    currency: Currency
    rationale: str = Field(max_length=2000)
    evidence_refs: list[str] = Field(max_length=20)


@dataclass(frozen=True)
class Recommend:
    model: ModelClient

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        inputs = job.inputs
        proposal = await ask(
            self.model,
            job,
            ModelRequest(
                task="recommend",
                prompt_version=SUPPORT_RECOMMEND_V1,
                inputs={
                    "request": inputs["request"],
                    "classification": _without_call(inputs["classification"]),
                    "policy": inputs["policy"],
                    "account": inputs["account"],
                    "revision_feedback": inputs.get("revision_feedback"),
                },
                output_schema=output_schema(RecommenderOutput),
                case_key=envelope.correlation_id,
                attempt=job.attempt,
            ),
            RecommenderOutput,
        )
        if isinstance(proposal, StageResult):
            return proposal
        return StageResult(
            "RECOMMENDATION_GENERATED",
            {**proposal.value, "call": proposal.call.model_dump(mode="json")},
        )


def _without_call(artifact: dict[str, object]) -> dict[str, object]:
    """Model context gets the artifact, not the record of how it was produced."""
    return {k: v for k, v in artifact.items() if k != "call"}
