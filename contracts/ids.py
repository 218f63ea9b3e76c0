"""Deterministic identifiers and canonical fingerprints.

Every id derived here is a pure function of its inputs, so a redelivered message, a retried
transaction or a replayed request always produces the same id, and deduplication works at
every layer.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from typing import Any

_NAMESPACE = uuid.UUID("6f1c2b1e-4d0a-4b6e-9a57-1d2c8e0f3a90")


def derive(*parts: object) -> str:
    """A stable UUID string for the given parts."""
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join(str(p) for p in parts)))


def workflow_id_for(workflow_type: str, tenant_id: str, event_id: str) -> str:
    """The workflow id of a request that carries no business key."""
    return derive("workflow", workflow_type, tenant_id, event_id)


def job_id_for(workflow_id: str, state_version: int, stage: str) -> str:
    return derive("job", workflow_id, state_version, stage)


def result_event_id(job_id: str) -> str:
    """The event id of a stage's result: one job, one result, however often it runs."""
    return derive("result", job_id)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(value: Any) -> str:
    """SHA-256 of the canonical JSON form: equal content, equal fingerprint."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


_KV_SAFE = re.compile(r"[-_=A-Za-z0-9]{1,200}")


def kv_key(workflow_id: str) -> str:
    """A NATS KV key for a workflow id (ids with other characters are hashed)."""
    if _KV_SAFE.fullmatch(workflow_id):
        return workflow_id
    return "h_" + hashlib.sha256(workflow_id.encode()).hexdigest()[:40]
