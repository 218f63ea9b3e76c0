"""A job whose result waits for the projector's answer stays alive: the stage tells the broker
it is still working on it until the result is submitted, so a slow answer (up to the ask's
wait) plus a slow call never outlast the job's ack wait and have it run a second time."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.services.runtime import stage as stage_module
from interlock.services.runtime.stage import StageResult, StageWorker, consume
from tests.support.fake_msg import FakeMsg
from tests.unit.test_stage_failure_reports import ENVELOPE, job

HEARTBEAT_S = 0.01


class Admitted:
    async def is_stale(self, *_: Any, **__: Any) -> bool:
        return False


@dataclass
class Watched(FakeMsg):
    """A job message that says when the broker was told twice it is still being worked on."""

    twice: asyncio.Event = field(default_factory=asyncio.Event)

    async def in_progress(self) -> None:
        await super().in_progress()
        if self.pings >= 2:
            self.twice.set()


async def _done(inputs: JobPayload, envelope: Envelope) -> StageResult:
    return StageResult("DONE", {})


async def test_the_job_is_kept_alive_while_its_result_waits_for_an_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    envelope = ENVELOPE.model_copy(update={"payload": job().model_dump(mode="json")})
    raw = Watched(envelope.to_bytes(), subject="wf.jobs.t.s")
    pings_while_waiting: list[int] = []

    async def slow_answer(*_: Any) -> None:
        # The projector answers only once the broker was told twice the job is alive.
        try:
            await asyncio.wait_for(raw.twice.wait(), 5)
        except TimeoutError:
            raise AssertionError("the job was not kept alive while it waited") from None
        pings_while_waiting.append(raw.pings)

    monkeypatch.setattr(stage_module, "submit", slow_answer)
    worker = StageWorker("t", "s", _done, heartbeat_s=HEARTBEAT_S)

    await consume(cast(Any, object()), worker, cast(Any, Admitted()), cast(Any, raw))

    assert pings_while_waiting[0] >= 2
    assert raw.ending == "ack"
    pings = raw.pings
    await asyncio.sleep(HEARTBEAT_S * 5)
    assert raw.pings == pings  # the heartbeat stopped with the job
