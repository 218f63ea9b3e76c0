"""A model node: ask the model for a structured proposal, validate it, record everything.

The model's output is untrusted input. It is validated against a closed schema before it can
become an event; the call (model, versions, output, validation verdict, latency, tokens) is
recorded in the event payload so recovery reads it back instead of asking again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from pydantic import BaseModel, ValidationError

from interlock.contracts.envelope import summarise
from interlock.contracts.jobs import JobPayload
from interlock.contracts.payloads import ModelCall, TokenUsage
from interlock.otel import metrics
from interlock.otel.messaging import client_span
from interlock.services.ports import ModelClient, ModelReply, ModelRequest
from interlock.services.runtime import calls
from interlock.services.runtime.stage import StageResult

tracer = trace.get_tracer("interlock.model")


@dataclass(frozen=True)
class Proposal:
    """A validated proposal and the record of the call that produced it."""

    value: dict[str, Any]
    call: ModelCall


def output_invalid(call: ModelCall) -> StageResult:
    """The result of a model answer that failed validation (the workflow decides on repair)."""
    return StageResult("MODEL_OUTPUT_INVALID", {"call": call.model_dump(mode="json")})


async def ask(
    model: ModelClient,
    job: JobPayload,
    request: ModelRequest,
    schema: type[BaseModel],
    *,
    invalid: Callable[[ModelCall], StageResult] = output_invalid,
) -> Proposal | StageResult:
    """The validated proposal, or the result event that reports why there is none (`invalid`
    builds it for an answer that failed validation)."""
    if job.repair:
        previous = (job.inputs.get("invalid_model_output") or {}).get("call", {})
        request = request.model_copy(update={"repair_errors": previous.get("errors", [])})
    reply = await calls.call(_complete(model, request), "model")
    if isinstance(reply, StageResult):
        return reply
    errors: list[str] = []
    value: dict[str, Any] = {}
    try:
        value = schema.model_validate(reply.output).model_dump(mode="json")
    except ValidationError as exc:
        errors = [summarise(exc)]
    metrics.model_call(request.task, reply.model, reply.latency_ms, valid=not errors)
    call = ModelCall(
        model=reply.model,
        model_version=reply.model_version,
        prompt_version=request.prompt_version,
        output=reply.output,
        validation="failed" if errors else "passed",
        errors=errors,
        latency_ms=reply.latency_ms,
        tokens=TokenUsage(prompt=reply.prompt_tokens, completion=reply.completion_tokens),
        repair=job.repair,
    )
    if errors:
        return invalid(call)
    return Proposal(value=value, call=call)


async def _complete(model: ModelClient, request: ModelRequest) -> ModelReply:
    with client_span(
        tracer,
        f"model {request.task}",
        {
            "interlock.model.task": request.task,
            "interlock.model.prompt_version": request.prompt_version,
            "interlock.model.attempt": request.attempt,
            "interlock.model.repair": bool(request.repair_errors),
        },
    ) as span:
        reply = await model.complete(request)
        span.set_attributes(
            {
                "interlock.model.name": reply.model,
                "interlock.model.version": reply.model_version or "",
                "interlock.model.latency_ms": reply.latency_ms,
                "interlock.model.prompt_tokens": reply.prompt_tokens,
                "interlock.model.completion_tokens": reply.completion_tokens,
            }
        )
    return reply
