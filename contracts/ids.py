"""Deterministic identifiers and canonical fingerprints.

Every id derived here is a pure function of its inputs, so a redelivered message, a retried
transaction or a replayed request always produces the same id, and deduplication works at
every layer.
"""

from __future__ import annotations

import hashlib
import json
import uuid

_NAMESPACE = uuid.UUID("6f1c2b1e-4d0a-4b6e-9a57-1d2c8e0f3a90")


def derive(*parts: object) -> str:
    """A stable UUID string for the given parts."""
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(str(p) for p in parts)))


def workflow_id_for(workflow_type: str, tenant_id: str, event_id: str) -> str:
    """The workflow id of a request that carries no business key."""
    return derive("workflow", workflow_type, tenant_id, event_id)


RESULT_PREFIX = "result:"
TIMER_PREFIX = "timer:"
RESERVED_PREFIXES = (RESULT_PREFIX, TIMER_PREFIX)
"""Event ids in these namespaces are derived by Interlock itself (a stage's result from its
job, a timer firing from its timer); a request or signal may not use them, so nobody can
spend the id of a result or firing before it exists."""


def job_id_for(tenant_id: str, workflow_id: str, state_version: int, stage: str) -> str:
    """A job's id. Workflow ids are unique per tenant only, so the tenant is part of it."""
    return derive("job", tenant_id, workflow_id, state_version, stage)


def result_event_id(job_id: str) -> str:
    """The event id of a stage's result: one job, one result, however often it runs."""
    return RESULT_PREFIX + derive("result", job_id)


def timer_id_for(tenant_id: str, workflow_id: str, state_version: int, kind: str) -> str:
    """A timer's id: one per kind and workflow version."""
    return derive("timer", tenant_id, workflow_id, state_version, kind)


def timer_event_id(timer_id: str) -> str:
    """The event id of a timer's firing: fired twice, it is still one event."""
    return TIMER_PREFIX + derive("timer-fired", timer_id)


def is_reserved(event_id: str) -> bool:
    """Whether `event_id` lies in a namespace only results and timer firings may use."""
    return event_id.startswith(RESERVED_PREFIXES)


def sealed_message_id(event_id: str, seal: str) -> str:
    """The `Nats-Msg-Id` of a result or timer firing: its event id and a seal nobody outside
    the installation can compute (an HMAC only the projector can make, a nonce only the
    database holds). The inbound stream deduplicates by message id across every subject, so
    under the bare event id (derivable from an announcement) any client could publish first
    and have the real result or firing dropped as a duplicate."""
    return f"{event_id}.{seal}"


def canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(value: object) -> str:
    """SHA-256 of the canonical JSON form: equal content, equal fingerprint."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()
