"""Reads the per-workflow open-jobs record (KV bucket `wf_open_jobs`) to skip stale jobs.

The record is written through the outbox in commit order, before the jobs it lists, so it
can lag but never run ahead: a job the projector dispatched always finds it. A job is stale
when the record is at least as new as the job and no longer lists it. For a read-only stage
an older or missing record means "do the work" (a stale result is refused by the projector
anyway); an effectful stage never acts without the record (`missing`).
"""

from __future__ import annotations

import logging
from typing import Literal

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, KeyNotFoundError
from nats.js.kv import KeyValue
from pydantic import ValidationError

from interlock.contracts import subjects
from interlock.contracts.ids import kv_key
from interlock.contracts.jobs import OpenJobs

log = logging.getLogger("interlock.stage")
JobStatus = Literal["open", "stale", "missing"]


class OpenJobsReader:
    def __init__(self, js: JetStreamContext) -> None:
        self._js = js
        self._kv: KeyValue | None = None

    async def status(
        self, tenant_id: str, workflow_id: str, job_id: str, expected_version: int | None
    ) -> JobStatus:
        """`stale` if the workflow no longer waits for the job, `missing` if there is no
        record to tell (or the job names no workflow or version), else `open`."""
        if expected_version is None or not workflow_id:
            return "missing"
        record = await self._read(tenant_id, workflow_id)
        if record is None:
            return "missing"
        return "stale" if record.is_stale(job_id, expected_version) else "open"

    async def _read(self, tenant_id: str, workflow_id: str) -> OpenJobs | None:
        try:
            if self._kv is None:
                self._kv = await self._js.key_value(subjects.JOBS_BUCKET)
            entry = await self._kv.get(kv_key(tenant_id, workflow_id))
        except (KeyNotFoundError, BucketNotFoundError):
            return None
        if entry.value is None:
            return None
        try:
            return OpenJobs.model_validate_json(entry.value)
        except ValidationError:
            log.warning("unreadable open-jobs record for %s", workflow_id)
            return None
