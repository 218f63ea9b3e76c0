"""What a stage does with the projector's answer about a signed job: an effect acts only on
`open`, waits while nobody answers and refuses a job of a workflow the projector does not
know; a read-only stage asks about redeliveries only and does the work when nobody answers."""

from __future__ import annotations

from typing import Any, cast

import pytest

from interlock.contracts.envelope import Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.jobs import JOB_EVENT_TYPE, JobPayload
from interlock.messaging.patience import BROKER_DOWN
from interlock.services.errors import ProjectorSilent
from interlock.services.runtime import stage as stage_module
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


class _SilentTwice:
    """No partition answers the first two questions; the third finds the job open."""

    def __init__(self) -> None:
        self.asked = 0

    async def is_stale(self, *_: object, **__: object) -> bool:
        self.asked += 1
        if self.asked <= 2:
            raise ProjectorSilent("nobody answered")
        return False


async def test_an_effect_job_waits_out_a_silent_projector_kept_alive_then_runs_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    envelope = ENVELOPE.model_copy(update={"payload": job().model_dump(mode="json")})
    raw = FakeMsg(envelope.to_bytes(), subject="wf.jobs.t.s")
    ran: list[str] = []
    submitted: list[str] = []

    async def handler(inputs: JobPayload, job_envelope: Envelope) -> StageResult:
        ran.append(inputs.job_id)
        return StageResult("DONE", {})

    async def submit(*_: object) -> None:
        submitted.append("DONE")

    monkeypatch.setattr(stage_module, "submit", submit)
    admission = _SilentTwice()
    worker = StageWorker("t", "s", handler, effects=True)

    await consume(cast(Any, object()), worker, cast(Any, admission), cast(Any, raw))

    assert admission.asked == 3
    assert raw.pings >= 2  # kept alive while nobody answered
    assert ran == [job().job_id]
    assert submitted == ["DONE"]
    assert raw.ending == "ack"
