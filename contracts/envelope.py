"""The event envelope every Interlock message travels in."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from interlock.contracts.errors import MalformedMessage
from interlock.contracts.ids import workflow_id_for

MAX_MESSAGE_BYTES = 256 * 1024
"""Larger messages are dead-lettered unread: a workflow event carries references, not blobs."""

SCHEMA_VERSION = 1

EventType = Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")]
WorkflowType = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]{0,31}$")]
Identifier = Annotated[str, Field(min_length=1, max_length=200)]
MAX_IDENTIFIER = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def is_identifier(value: str) -> bool:
    """Whether `value` can be a stored tenant, workflow or event id: 1 to `MAX_IDENTIFIER`
    characters, none a control character (the database refuses a NUL in text, and the
    projector's door refuses every message with one), so a read of anything else can be
    answered "no such" without asking the database."""
    return 0 < len(value) <= MAX_IDENTIFIER and not _CONTROL.search(value)


class Actor(BaseModel):
    """Who or what caused an event: a person, a stage service, the timer service."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Identifier
    role: Annotated[str, Field(min_length=1, max_length=100)]


class Envelope(BaseModel):
    """One fact or command about one workflow, as it travels over NATS.

    On a request (`type == "START"`) `workflow_id` is an optional business key; without it
    the projector derives the id from tenant and `event_id`, so a replay maps to the same
    workflow.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_id: Identifier
    type: EventType
    workflow_type: WorkflowType
    workflow_id: Identifier | None = None
    tenant_id: Identifier
    actor: Actor
    causation_id: Identifier | None = None
    correlation_id: Identifier | None = None
    schema_version: int = Field(default=SCHEMA_VERSION, ge=1, le=SCHEMA_VERSION)
    occurred_at: AwareDatetime
    expected_version: int | None = Field(default=None, ge=0)
    payload: dict[str, Any] = Field(default_factory=dict)

    def to_bytes(self) -> bytes:
        """Serialise for publishing (compact JSON, UTF-8)."""
        return self.model_dump_json(exclude_none=True).encode()


def workflow_id_of(event: Envelope) -> str:
    """The workflow an event addresses: its `workflow_id`, or for a request without one the
    id derived from its type, tenant and event id."""
    return event.workflow_id or workflow_id_for(
        event.workflow_type, event.tenant_id, event.event_id
    )


def parse_envelope(raw: bytes) -> Envelope:
    """Validate raw bytes into an `Envelope` or raise `MalformedMessage`."""
    if len(raw) > MAX_MESSAGE_BYTES:
        raise MalformedMessage("oversized", f"{len(raw)} bytes > {MAX_MESSAGE_BYTES}")
    if b"\x00" in raw:
        # A raw NUL byte is never valid JSON; name it for what it is.
        raise MalformedMessage("nul_character", "text may not contain NUL characters")
    try:
        envelope = Envelope.model_validate_json(raw)
    except ValidationError as exc:
        json_error = any(err["type"] == "json_invalid" for err in exc.errors())
        reason = "bad_json" if json_error else "schema_mismatch"
        raise MalformedMessage(reason, summarise(exc)) from exc
    # PostgreSQL text and jsonb cannot hold U+0000: refuse it here, as the malformed input it
    # is, rather than let it fail every commit as a database error.
    if b"\\u0000" in raw and _holds_nul(envelope.model_dump(mode="json")):
        raise MalformedMessage("nul_character", "a text field holds U+0000 (NUL)")
    return envelope


def _holds_nul(value: object) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(k) or _holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_nul(v) for v in value)
    return False


def summarise(exc: ValidationError) -> str:
    """A short, single-line account of a validation error (no input values echoed)."""
    parts = [
        f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
        for err in exc.errors()[:5]
    ]
    return "; ".join(parts)


def utcnow() -> datetime:
    return datetime.now(UTC)
