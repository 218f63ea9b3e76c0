"""The job a stage service receives: published on `wf.job.<type>.<stage>` inside an envelope
whose `type` is `JOB`, `event_id` is the job id and `expected_version` the state version that
issued it. The projector signs it (`signature`) so that a stage can tell a job the projector
decided from one somebody published."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from interlock.contracts.envelope import Envelope
from interlock.contracts.ids import canonical_json, fingerprint

JOB_EVENT_TYPE = "JOB"


class JobPayload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    job_id: str
    stage: str
    state: str
    branch: str | None = None
    attempt: int = Field(default=1, ge=1)
    repair: bool = False
    """The previous model output failed validation: ask once more, with the errors."""
    cancel_requested: bool = False
    definition_version: int = Field(ge=1)
    inputs: dict[str, Any] = Field(default_factory=dict)
    reply_id: str | None = None
    """The `Nats-Msg-Id` the stage publishes its result under (`ids.sealed_message_id`): the
    result's event id sealed with an HMAC of the job id that only the projector can compute,
    so no client can spend it first. Set by the signer, covered by the signature."""
    signature: str | None = None
    """The projector's Ed25519 signature of `signed_claims`: `v2.` and the base64url bytes."""


SIGNATURE_SCHEME = "v2"
"""Prefixed to every signature (`v2.<base64url>`): what the signature covers. A job signed by
an older release (no prefix: the workflow, tenant, job id, stage, version and inputs only) is
refused, never accepted on the narrower claims."""


def signed_claims(job_envelope: Envelope, job: JobPayload) -> bytes:
    """What a job's signature covers: every field of the envelope but its payload (type,
    actor, workflow type and id, tenant, expected version, ids and time) and every field of
    the job but the signature itself, its inputs by digest."""
    envelope = job_envelope.model_dump(mode="json", exclude={"payload"})
    fields = job.model_dump(mode="json", exclude={"signature", "inputs"})
    claims = {
        "scheme": SIGNATURE_SCHEME,
        "envelope": envelope,
        "job": {**fields, "inputs_sha256": fingerprint(job.inputs)},
    }
    return canonical_json(claims).encode()
