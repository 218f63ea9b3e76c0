"""What a stage does with the projector's answer about a signed job: an effect acts only on
`open` and, while nobody answers, hands the job back to the broker for later, its worker
freed; a read-only stage asks about redeliveries only and does the work when nobody answers."""

from __future__ import annotations

from typing import Any, cast

import pytest

from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JOB_EVENT_TYPE, JobPayload
from interlock.services.errors import ProjectorSilent
from interlock.services.runtime.admission import JobAdmission
from interlock.services.runtime.openjobs import Known
from interlock.services.runtime.stage import StageResult, StageWorker, consume
from tests.support.fake_msg import FakeMsg
from tests.support.payloads import envelope
from tests.unit.test_stage_failure_reports import ENVELOPE, job

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


async def test_an_effect_acts_on_nothing_while_nobody_answers() -> None:
    with pytest.raises(ProjectorSilent):
        await _stale(_Answer("unknown"), effects=True)


@pytest.mark.parametrize(
    ("status", "skipped"), [("open", False), ("unknown", False), ("stale", True)]
)
async def test_a_read_only_stage_asks_about_redeliveries_only(status: Known, skipped: bool) -> None:
    first = _Answer(status)
    assert not await _stale(first, effects=False)
    assert first.asked == []

    assert await _stale(_Answer(status), effects=False, redelivered=True) is skipped


class _Silent:
    async def is_stale(self, *_: object, **__: object) -> bool:
        raise ProjectorSilent("nobody answered")


async def test_an_effect_job_nobody_answered_about_goes_back_to_the_broker_for_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    envelope = ENVELOPE.model_copy(update={"payload": job().model_dump(mode="json")})
    raw = FakeMsg(envelope.to_bytes(), subject="wf.jobs.t.s")
    ran: list[str] = []

    async def handler(inputs: JobPayload, job_envelope: Envelope) -> StageResult:
        ran.append(inputs.job_id)
        return StageResult("DONE", {})

    worker = StageWorker("t", "s", handler, effects=True)

    await consume(cast(Any, object()), worker, cast(Any, _Silent()), cast(Any, raw))

    assert ran == []
    [(ending, delay)] = raw.endings
    assert ending == "nak"
    assert (delay or 0) > 0  # not at once: the projector is given time
