"""Payload models shared by workflow definitions: stage results, signals, timer firings.

Models are strict (`extra="forbid"`): a payload with an unknown field is a schema mismatch and
is dead-lettered, not silently trimmed. Amounts are `Decimal` (JSON strings on the wire).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

ShortText = Annotated[str, Field(min_length=1, max_length=200)]
Text = Annotated[str, Field(max_length=4000)]
Currency = Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
Amount = Annotated[Decimal, Field(ge=0, max_digits=14, decimal_places=2)]


class Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Empty(Payload):
    """No payload fields; an optional note for the audit trail."""

    note: Text | None = None


class TokenUsage(Payload):
    prompt: int = Field(default=0, ge=0)
    completion: int = Field(default=0, ge=0)


class ModelCall(Payload):
    """Everything needed to explain and replay one model call without asking again."""

    model: ShortText
    model_version: ShortText | None = None
    prompt_version: ShortText
    output: dict[str, object]
    validation: Literal["passed", "failed"]
    errors: list[Text] = Field(default_factory=list)
    latency_ms: float = Field(ge=0)
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    repair: bool = False
    task: ShortText | None = None
    """The model task asked (`ModelRequest.task`); absent in calls recorded before it was."""
    cost: Annotated[Decimal, Field(ge=0, max_digits=20, decimal_places=10)] = Decimal(0)
    """What the call cost by the stage's price table for its model (0 for local models)."""
    input_digest: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    """SHA-256 of the canonical JSON of the inputs the model was given (never the inputs)."""
    input_refs: list[ShortText] = Field(default_factory=list, max_length=50)
    """The names of those inputs."""
    trace_id: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")] | None = None
    """The trace the call was made in."""
    parameters: dict[ShortText, str | int | float | bool] = Field(
        default_factory=dict, max_length=20
    )
    """The generation parameters the model client sent (temperature, output format)."""


class TimerFired(Payload):
    """The payload of every timer firing; the engine checks the timer is still armed."""

    timer_id: ShortText
    fire_at: datetime
    branch: ShortText | None = None


class ErrorReport(Payload):
    """A stage's failure: `error_class` is a stable code, `detail` a short sanitised text."""

    error_class: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    detail: Text = ""
    system: ShortText | None = None
    """The outside system (or the stage) that failed, as the stage names it (`system`)."""
    retry_after_s: Annotated[float, Field(ge=0)] | None = None
    """With a transient failure: how long the failing system asked to be left alone (its
    `Retry-After`); the durable retry waits at least that, within its policy's cap."""


class Escalation(Payload):
    reason: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    detail: Text = ""
    idempotency_key: ShortText | None = None
    """With `effect_outcome_unknown`: the key of the effect that may have happened."""


class ModelOutputInvalid(Payload):
    call: ModelCall


class PolicyCheck(Payload):
    """One named check of a policy validation and its verdict."""

    name: ShortText
    passed: bool
    detail: Text = ""
