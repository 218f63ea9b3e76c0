"""A job whose stage failed waits in the broker before its next delivery: from the stage's
`redelivery_s` (INTERLOCK_STAGE_REDELIVERY_S, default 1 s), doubled at each delivery, at least
what the failing system asked for (Retry-After), never over 60 s."""

from __future__ import annotations

from typing import Any, cast

import pytest

from interlock.app import wiring
from interlock.app.runtime import Runtime
from interlock.config.settings import Settings
from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.errors import ExternalUnavailable, Transient
from interlock.services.runtime.stage import StageResult, StageWorker, _run
from tests.support.fake_msg import FakeMsg
from tests.support.payloads import job_envelope
from tests.support.workflows import REGISTRY

ENVELOPE = job_envelope()
JOB = JobPayload(job_id="job-1", stage="s", state="S", definition_version=1, inputs={})


def failing(exc: Exception, **fields: Any) -> StageWorker:
    async def handler(job: JobPayload, envelope: Envelope) -> StageResult:
        raise exc

    return StageWorker("t", "s", handler, **fields)


async def _nak_after(stage: StageWorker, delivered: int) -> float | None:
    msg = FakeMsg(b"", "wf.job.t.s", delivered=delivered)
    assert await _run(stage, JOB, ENVELOPE, cast(Any, msg)) is None
    ((kind, delay),) = msg.endings
    assert kind == "nak"
    return delay


@pytest.mark.parametrize(
    ("redelivery_s", "delivered", "expected"),
    [(1.0, 1, 1.0), (1.0, 3, 4.0), (0.1, 1, 0.1), (0.1, 5, 1.6), (10.0, 5, 60.0)],
)
async def test_the_wait_grows_from_the_stages_first_redelivery(
    redelivery_s: float, delivered: int, expected: float
) -> None:
    stage = failing(Transient("busy"), redelivery_s=redelivery_s)

    assert await _nak_after(stage, delivered) == pytest.approx(expected)


async def test_a_system_that_asks_for_longer_is_given_it() -> None:
    busy = ExternalUnavailable("busy", retry_after=7.0)

    assert await _nak_after(failing(busy, redelivery_s=0.1), 1) == pytest.approx(7.0)


def test_the_setting_is_bounded_and_defaults_to_a_second() -> None:
    assert Settings().stage_redelivery_s == 1.0
    with pytest.raises(ValueError, match="stage_redelivery_s"):
        Settings(stage_redelivery_s=0.01)
    with pytest.raises(ValueError, match="stage_redelivery_s"):
        Settings(stage_redelivery_s=61)


def test_every_wired_stage_takes_the_configured_first_redelivery() -> None:
    rt = Runtime(Settings(stage_redelivery_s=0.25), "nats://h:1")
    workers = [
        worker
        for workflow_type in REGISTRY.workflow_types()
        for worker in wiring.stage_handlers(rt, cast(Any, None), workflow_type).values()
    ]

    assert workers
    assert {worker.redelivery_s for worker in workers} == {0.25}
