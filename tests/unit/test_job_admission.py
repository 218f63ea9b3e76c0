"""What a stage does with the projector's answer about a signed job: an effect acts only on
`open`, waits while nobody answers and refuses a job of a workflow the projector does not
know; a read-only stage asks about redeliveries only and does the work when nobody answers."""

from __future__ import annotations

import pytest

from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.jobs import JOB_EVENT_TYPE, JobPayload
from interlock.messaging.patience import BROKER_DOWN
from interlock.services.errors import ProjectorSilent
from interlock.services.runtime.admission import JobAdmission
from interlock.services.runtime.openjobs import Known
from tests.support.payloads import envelope

JOB = JobPayload(job_id="job-1", stage="execute_action", state="S", definition_version=1)


class _Signed:
    def verify(self, job_envelope: Envelope, job: JobPayload) -> bool:
        return True


class _Answer:
    def __init__(self, status: Known) -> None:
        self.status_is = status
        self.asked: list[tuple[str, ...]] = []

    async def status(self, *question: str) -> Known:
        self.asked.append(question)
        return self.status_is


def _job() -> Envelope:
    return envelope(JOB_EVENT_TYPE, payload=JOB.model_dump(), expected_version=3)


async def _stale(answer: _Answer, *, effects: bool, redelivered: bool = False) -> bool:
    admission = JobAdmission(_Signed(), answer)  # type: ignore[arg-type]
    return await admission.is_stale(
        _job(),
        JOB,
        workflow_type="support",
        stage="execute_action",
        effects=effects,
        redelivered=redelivered,
    )


async def test_an_effect_asks_about_every_job_and_acts_only_on_open() -> None:
    answer = _Answer("open")

    assert not await _stale(answer, effects=True)
    assert answer.asked == [("support", "execute_action", "acme", "wf-1", "job-1")]
    assert await _stale(_Answer("stale"), effects=True)


async def test_an_effect_waits_while_nobody_answers() -> None:
    with pytest.raises(ProjectorSilent) as silent:
        await _stale(_Answer("unknown"), effects=True)
    assert isinstance(silent.value, BROKER_DOWN)  # waited out, the job kept alive


async def test_an_effect_refuses_a_job_of_a_workflow_the_projector_does_not_know() -> None:
    with pytest.raises(MalformedMessage) as refused:
        await _stale(_Answer("missing"), effects=True)
    assert refused.value.reason == "no_such_workflow"


@pytest.mark.parametrize(
    ("status", "skipped"), [("open", False), ("unknown", False), ("stale", True), ("missing", True)]
)
async def test_a_read_only_stage_asks_about_redeliveries_only(status: Known, skipped: bool) -> None:
    first = _Answer(status)
    assert not await _stale(first, effects=False)
    assert first.asked == []

    assert await _stale(_Answer(status), effects=False, redelivered=True) is skipped
