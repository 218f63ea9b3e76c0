"""`ModelTask`: what a plugin's stages ask a model, declared by the plugin, not the runtime;
`ask`: a model node, the one way a stage asks it.

The runtime's model clients are generic: the OpenAI-compatible client renders the prompt the
request's `prompt_version` names from the plugin's released prompts, and the deterministic
``rules`` model answers a task with the plugin's rules function, if it has one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from opentelemetry import trace
from pydantic import BaseModel, ValidationError

from interlock._sdk.stages import StageContext
from interlock.contracts.envelope import summarise
from interlock.contracts.payloads import ModelCall, TokenUsage
from interlock.otel import metrics
from interlock.otel.messaging import client_span
from interlock.services.ports import ModelClient, ModelReply, ModelRequest

M = TypeVar("M", bound=BaseModel)
tracer = trace.get_tracer("interlock.model")

Rules = Callable[[Mapping[str, object], bool], Mapping[str, object]]
"""`rules(inputs, repairing) -> output`: deterministic, no I/O. `repairing` is true when the
previous answer failed validation. A pydantic `ValidationError` it raises is reported as
invalid model inputs (the fields only, never their values)."""


Faults = Callable[[Mapping[str, object], Mapping[str, object], bool], Mapping[str, object]]
"""`faults(inputs, answer, repairing) -> answer`: an offline model's answer with the plugin's
test markers applied (see `ModelTask.faults`)."""


@dataclass(frozen=True)
class Prompt:
    """One released prompt. Immutable once released: changing what the model is asked means a
    new version, so a recorded model call's `prompt_version` names the exact words used."""

    version: str
    instructions: str


@dataclass(frozen=True)
class ModelTask:
    """A task (`ModelRequest.task`) the plugin's stages ask a model: its released prompts and,
    optionally, the rules the ``rules`` model (no network, the default) answers it with."""

    name: str
    prompts: tuple[Prompt, ...]
    rules: Rules | None = None
    output: type[BaseModel] | None = None
    """The model its answer must validate against (what the stages pass to `ask`), for
    `interlock eval`'s check of answers."""
    examples: Path | None = None
    """Labelled examples (JSONL, `{"inputs", "output"}` a line) the ``local`` model learns
    `label` from; a task without them is answered by its rules there too."""
    label: str | None = None
    """The output field the ``local`` model predicts from `examples` (with `confidence`
    and `rationale`)."""
    faults: Faults | None = None
    """The test markers an offline stand-in besides the rules (the ``local`` model) honours,
    as `faults(inputs, answer, repairing) -> answer`: the demo's and the tests' way to make a
    model answer wrongly on purpose. Never applied to a real provider's answer."""
    golden: Path | None = None
    """The task's golden set (JSONL, `{"inputs", "expected": {field: value}}` a line) that
    `interlock eval` checks a model and prompt against; never the training examples."""
    approved: Mapping[str, str] = field(default_factory=dict)
    """Output fields a person settles afterwards, each with the dotted path in the workflow's
    data of the value they settled (`{"amount": "approval.amount"}`): what `interlock eval
    --shadow` compares a candidate's answers with besides the recorded accepted answers."""


@dataclass(frozen=True)
class Answer(Generic[M]):
    """A model's answer: `value` when it passed validation against the output model, and
    `call`, the record of the call (model, versions, output, verdict, latency, tokens), to
    put in the result so a recovery reads it back instead of asking again."""

    value: M | None
    call: ModelCall

    @property
    def valid(self) -> bool:
        return self.value is not None


async def ask(
    model: ModelClient,
    request: ModelRequest,
    output: type[M],
    ctx: StageContext,
    *,
    invalid: ModelCall | None = None,
) -> Answer[M]:
    """Ask `model` for a structured proposal and validate it against `output`.

    The model's output is untrusted input: it becomes a value only once `output` accepts it.
    On a repair job (`ctx.repair`) the request carries the errors of the `invalid` call
    before it. A transient failure raises (`ExternalTimeout`, `ExternalUnavailable`), which
    the runtime reports as `RETRYABLE_ERROR` (name the stage's `system` "model").
    """
    if ctx.repair:
        errors = invalid.errors if invalid is not None else []
        request = request.model_copy(update={"repair_errors": list(errors)})
    reply = await _complete(model, request)
    errors = []
    value: M | None = None
    try:
        value = output.model_validate(reply.output)
    except ValidationError as exc:
        errors = [summarise(exc)]
    metrics.model_call(request.task, reply.model, reply.latency_ms, valid=not errors)
    call = ModelCall(
        task=request.task,
        cost=reply.cost,
        input_digest=input_digest(request.inputs),
        input_refs=sorted(request.inputs)[:50],
        trace_id=_trace_id(),
        parameters=reply.parameters,
        model=reply.model,
        model_version=reply.model_version,
        prompt_version=request.prompt_version,
        output=reply.output,
        validation="failed" if errors else "passed",
        errors=errors,
        latency_ms=reply.latency_ms,
        tokens=TokenUsage(prompt=reply.prompt_tokens, completion=reply.completion_tokens),
        repair=ctx.repair,
    )
    return Answer(value, call)


def input_digest(inputs: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of `inputs`: the identity of what a model was given."""
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _trace_id() -> str | None:
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


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
