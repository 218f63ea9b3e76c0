"""The job a stage service receives: published on `wf.job.<type>.<stage>` inside an envelope
whose `type` is `JOB`, `event_id` is the job id and `expected_version` the state version that
issued it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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
