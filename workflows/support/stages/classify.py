"""classify: the model proposes a category and a confidence; the definition decides.

The confidence threshold is a guard of the transition table, not code here: this stage
only reports what the model said, validated against the closed set of categories.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.services.ports import ModelClient, ModelRequest, output_schema
from interlock.services.runtime.stage import StageResult
from interlock.workflows.support.payloads import Category
from interlock.workflows.support.prompts import SUPPORT_CLASSIFY_V1
from interlock.workflows.support.stages.modelnode import ask


class ClassifierOutput(BaseModel):
    """What the model must return; every field required, nothing else allowed (the form
    OpenAI-compatible strict JSON-schema output demands)."""

    model_config = ConfigDict(extra="forbid")

    category: Category
    confidence: float = Field(ge=0, le=1)
    rationale: str = Field(max_length=2000)


@dataclass(frozen=True)
class Classify:
    model: ModelClient

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        request = job.inputs["request"]
        proposal = await ask(
            self.model,
            job,
            ModelRequest(
                task="classify",
                prompt_version=SUPPORT_CLASSIFY_V1,
                inputs={"subject": request["subject"], "body": request["body"]},
                output_schema=output_schema(ClassifierOutput),
                case_key=envelope.correlation_id,
                attempt=job.attempt,
            ),
            ClassifierOutput,
        )
        if isinstance(proposal, StageResult):
            return proposal
        return StageResult(
            "CLASSIFICATION_SUCCEEDED",
            {
                "category": proposal.value["category"],
                "confidence": proposal.value["confidence"],
                "call": proposal.call.model_dump(mode="json"),
            },
        )
