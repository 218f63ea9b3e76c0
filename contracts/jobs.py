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
    signature: str | None = None
    """The projector's Ed25519 signature of `signed_claims`, base64url."""


def signed_claims(job_envelope: Envelope, job: JobPayload) -> bytes:
    """What a job's signature covers: which workflow of which tenant, which job of which
    stage, the state version that issued it and (by digest) the inputs it acts on."""
    claims = {
        "workflow_id": job_envelope.workflow_id,
        "tenant_id": job_envelope.tenant_id,
        "job_id": job.job_id,
        "stage": job.stage,
        "expected_version": job_envelope.expected_version,
        "inputs_sha256": fingerprint(job.inputs),
    }
    return canonical_json(claims).encode()


class OpenJobs(BaseModel):
    """The per-workflow record in the `wf_open_jobs` bucket: which jobs still matter.

    A service skips a job when this record is at least as new as the job
    (`version >= expected_version`) and no longer lists it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int
    state: str
    jobs: list[str]

    def is_stale(self, job_id: str, expected_version: int) -> bool:
        return self.version >= expected_version and job_id not in self.jobs
