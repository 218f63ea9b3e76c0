"""What a stage checks before it acts on a job: that the projector signed it, and that the
workflow still waits for it.

An unsigned, altered or foreign-signed job, one signed before signature scheme v2, and a signed
job delivered to a stage it was not dispatched to are refused (`bad_signature`). An
effectful stage refuses one without the state version that issued it (`no_expected_version`:
a job the projector dispatched always has one) and asks the projector about every job
(`openjobs`): it skips one the workflow, as committed, no longer waits for (or a workflow no
longer there), and acts on none while no partition answers (`ProjectorSilent`).
"""

from __future__ import annotations

from dataclasses import dataclass

from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.jobs import SIGNATURE_SCHEME, JobPayload
from interlock.services.errors import ProjectorSilent
from interlock.services.runtime.openjobs import OpenJobsReader
from interlock.services.runtime.signatures import JobVerifier


@dataclass(frozen=True)
class JobAdmission:
    verifier: JobVerifier
    jobs: OpenJobsReader

    async def is_stale(
        self,
        job_envelope: Envelope,
        job: JobPayload,
        *,
        workflow_type: str,
        stage: str,
        effects: bool,
        redelivered: bool,
    ) -> bool:
        """Whether the workflow no longer waits for the job (skip it), when consumed by
        `stage` of `workflow_type`. Raises `MalformedMessage` for a job that must never be
        acted on."""
        if not self.verifier.verify(job_envelope, job):
            raise MalformedMessage(
                "bad_signature",
                f"the job is not signed by the projector (signature scheme {SIGNATURE_SCHEME})",
            )
        if (job_envelope.workflow_type, job.stage) != (workflow_type, stage):
            raise MalformedMessage("bad_signature", "the job is signed for another stage")
        if effects and job_envelope.expected_version is None:
            raise MalformedMessage("no_expected_version", "an effect job names no state version")
        if not (effects or redelivered):
            # A read-only stage asks about redeliveries only: a first delivery is rarely
            # stale, and a stale one costs only the work (its result is refused).
            return False
        if not job_envelope.workflow_id:
            return True  # no workflow waits for it (a signed job always names one)
        status = await self.jobs.status(
            workflow_type, stage, job_envelope.tenant_id, job_envelope.workflow_id, job.job_id
        )
        if status == "unknown" and effects:
            raise ProjectorSilent("nobody answered whether the workflow still waits for the job")
        return status == "stale"
