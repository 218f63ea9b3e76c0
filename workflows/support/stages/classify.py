"""classify: the model proposes a category and a confidence; the definition decides.

The confidence threshold is a guard of the transition table, not code here: this stage
only reports what the model said, validated against the closed set of categories.
"""

from __future__ import annotations

from pydantic import BaseModel

from interlock import ModelOutputInvalid, ModelRequest, StageContext, ask, output_schema, stage
from interlock.workflows.support.payloads import SupportRequest
from interlock.workflows.support.ports import MODEL
from interlock.workflows.support.prompts import SUPPORT_CLASSIFY_V1, ClassifierOutput
from interlock.workflows.support.results import Classified, OutputInvalid


class ClassifyInputs(BaseModel):
    request: SupportRequest
    invalid_model_output: ModelOutputInvalid | None = None
    """The answer that failed validation, on a repair job."""


@stage(
    "classify",
    reads=ClassifyInputs,
    emits=(Classified, OutputInvalid),
    ports=(MODEL,),
    system="model",
)
async def classify(job: ClassifyInputs, ctx: StageContext) -> Classified | OutputInvalid:
    answer = await ask(
        ctx.port(MODEL),
        ModelRequest(
            task="classify",
            prompt_version=SUPPORT_CLASSIFY_V1,
            inputs={"subject": job.request.subject, "body": job.request.body},
            output_schema=output_schema(ClassifierOutput),
            case_key=ctx.correlation_id,
            attempt=ctx.attempt,
        ),
        ClassifierOutput,
        ctx,
        invalid=job.invalid_model_output.call if job.invalid_model_output else None,
    )
    if answer.value is None:
        return OutputInvalid(call=answer.call)
    proposal = answer.value
    return Classified(category=proposal.category, confidence=proposal.confidence, call=answer.call)
