"""Ports: the narrow interfaces stage services use to reach the outside world.

Every port says what it guarantees and how it fails. Failures are Interlock's own errors,
from `interlock.services.errors`: `ExternalTimeout` (no answer in time — the call may or may
not have taken effect), `ExternalUnavailable` (refused before doing anything; safe to retry),
`ExternalRejected` (a definitive, permanent "no"). Adapters translate driver errors into these.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class _Value(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- model -----------------------------------------------------------------------------


class ModelRequest(_Value):
    """A schema-constrained model call. `prompt_version` names the template used; the
    rendered prompt never leaves the model client (no prompts in logs or spans)."""

    task: str = Field(min_length=1)
    """One of the model tasks the workflow's plugin declares (`ModelTask.name`)."""
    prompt_version: str
    inputs: dict[str, object]
    output_schema: dict[str, object]
    repair_errors: list[str] = Field(default_factory=list)
    """Validation errors of the previous answer, when this call is the repair attempt."""
    case_key: str | None = None
    """A stable key of the business case (e.g. the request's event id); recorded clients
    look answers up by it."""
    attempt: int = 1


@cache
def output_schema(model: type[BaseModel]) -> dict[str, object]:
    """The JSON schema a model's answer must meet: generated once per output model (pydantic
    builds it anew on every call, a measurable cost per job). Treat it as read-only."""
    return model.model_json_schema()


class ModelReply(_Value):
    output: dict[str, object]
    model: str
    model_version: str | None = None
    latency_ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: Decimal = Decimal(0)
    """What the call cost, by the installation's price table (`models.pricing`)."""
    parameters: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """The generation parameters the client sent (e.g. temperature), for the record."""


class ModelClient(Protocol):
    async def complete(self, request: ModelRequest) -> ModelReply:
        """One structured completion. Raises `ExternalTimeout`/`ExternalUnavailable` for
        transport trouble; returns whatever JSON object the model produced otherwise (the
        caller validates it — model output is untrusted input)."""
        ...


class EffectRequest(_Value):
    """One internal operation of a workflow (a follow-up, a review queue entry, an internal
    notification), with the authority it executes under, recorded beside it."""

    idempotency_key: str
    workflow_id: str
    effect: str
    authorized_by: dict[str, object]


class EffectReceipt(_Value):
    idempotency_key: str
    operation_id: str
    workflow_id: str
    effect: str


class EffectProvider(Protocol):
    async def execute(self, request: EffectRequest) -> EffectReceipt:
        """Perform the effect at most once per idempotency key (a repeat returns the first
        receipt). `ExternalTimeout` means the outcome is unknown: reconcile by key."""
        ...

    async def lookup(self, idempotency_key: str) -> EffectReceipt | None:
        """The receipt of a past `execute` with this key, or None if none took effect."""
        ...


@runtime_checkable
class EffectReverser(Protocol):
    """An `EffectProvider` that can also undo an effect (the simulator's; not every one can)."""

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        """Reverse the effect under this key, idempotently per key; returns the reversal id.
        `ExternalRejected` when there is none under the key or the operation does not match."""
        ...
