"""Reads the per-workflow open-jobs record (KV bucket `wf_open_jobs`) to skip stale jobs.

The record is written through the outbox in commit order, before the jobs it lists, so it
can lag but never run ahead. A job is skipped only when the record is at least as new as the
job and no longer lists it; a missing or older record means "do the work" — a stale job that
slips through is still harmless, because the projector refuses its result.
"""

from __future__ import annotations

import logging

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, KeyNotFoundError
from nats.js.kv import KeyValue
from pydantic import ValidationError

from interlock.contracts import subjects
from interlock.contracts.ids import kv_key
from interlock.contracts.jobs import OpenJobs

log = logging.getLogger("interlock.stage")


class OpenJobsReader:
    def __init__(self, js: JetStreamContext) -> None:
        self._js = js
        self._kv: KeyValue | None = None

    async def is_stale(
        self, tenant_id: str, workflow_id: str, job_id: str, expected_version: int | None
    ) -> bool:
        if expected_version is None or not workflow_id:
            return False
        record = await self._read(tenant_id, workflow_id)
        return record is not None and record.is_stale(job_id, expected_version)

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
            log.warning("unreadable open-jobs record for %s; doing the work", workflow_id)
            return None
