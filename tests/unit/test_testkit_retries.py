"""The test kit's retry paths are the runtime's: a stage with `redeliver=True` has its job
redelivered on a transient failure (nothing escapes `env.run()`), and after the broker's last
delivery it reports as the runtime's stage worker does: `RETRYABLE_ERROR` where its state
retries durably (so `wf.retrying()` fires), `ESCALATE` otherwise."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from interlock.app.wiring import worker
from interlock.contracts.jobs import JobPayload
from interlock.contracts.subjects import STAGE_MAX_DELIVER
from interlock.errors import ExternalTimeout, ExternalUnavailable, OutcomeUnknown
from interlock.services.runtime.stage import _run
from interlock.testing import WorkflowTestEnv
from tests.support.fake_msg import FakeMsg
from tests.support.loose import loose
from tests.support.payloads import job_envelope
from tests.unit.testkit_plugins import Sender, plugin

ENVELOPE = job_envelope("sender")


def env_with(sender: Sender, **changes: Any) -> WorkflowTestEnv:
    return WorkflowTestEnv(plugin(**changes), adapters={"sender": sender})


def trail(env: WorkflowTestEnv, wf: str) -> list[tuple[str, str | None, bool]]:
    return [(a.event_type, a.to_state, a.accepted) for a in env.audit(wf)]


async def test_a_transient_error_of_a_redelivered_stage_is_redelivered_not_raised() -> None:
    sender = Sender(ExternalUnavailable("down"))
    env = env_with(sender)
    wf = await env.start({"to": "ada"})

    await env.run()

    assert await env.state(wf) == "SENT"
    assert sender.calls == 2
    assert trail(env, wf) == [("START", "SENDING", True), ("SENT", "SENT", True)]


async def test_after_the_last_delivery_the_durable_retry_of_the_state_fires() -> None:
    sender = Sender(*[ExternalTimeout("slow")] * STAGE_MAX_DELIVER)
    env = env_with(sender)
    wf = await env.start({"to": "ada"})

    await env.run()
    assert sender.calls == STAGE_MAX_DELIVER
    assert trail(env, wf)[-1] == ("RETRYABLE_ERROR", "SENDING", True)
    assert loose(await env.data(wf))["last_error"]["error_class"] == "send_timeout"
    assert env.armed_timers(wf)

    await env.advance(3600)

    assert await env.state(wf) == "SENT"
    assert sender.calls == STAGE_MAX_DELIVER + 1


async def test_a_state_without_a_durable_retry_escalates_on_the_last_delivery() -> None:
    sender = Sender(*[ExternalUnavailable("down")] * STAGE_MAX_DELIVER)
    env = env_with(sender, retrying=False)
    wf = await env.start({"to": "ada"})

    await env.run()

    assert await env.state(wf) == "FAILED"
    assert trail(env, wf)[-1] == ("ESCALATE", "FAILED", True)
    assert loose(await env.data(wf))["last_error"]["error_class"] == "stage_unavailable"


async def test_an_unknown_effect_outcome_escalates_with_its_key_even_where_the_state_retries() -> (
    None
):
    sender = Sender(*[OutcomeUnknown("?", idempotency_key="k-1")] * STAGE_MAX_DELIVER)
    env = env_with(sender)
    wf = await env.start({"to": "ada"})

    await env.run()

    assert trail(env, wf)[-1] == ("ESCALATE", "FAILED", True)
    assert loose(await env.data(wf))["last_error"]["error_class"] == "effect_outcome_unknown"


async def test_a_bug_in_a_redelivered_stage_escalates_after_its_redeliveries() -> None:
    sender = Sender(*[ValueError("boom")] * STAGE_MAX_DELIVER)
    env = env_with(sender)
    wf = await env.start({"to": "ada"})

    await env.run()

    assert sender.calls == STAGE_MAX_DELIVER
    assert trail(env, wf)[-1] == ("ESCALATE", "FAILED", True)


async def test_the_runtime_stage_reports_a_retryable_error_on_the_last_delivery() -> None:
    """The same rule in the runtime's stage worker, on a job message's last delivery."""
    p = plugin()
    stage = worker("sender", p.stages[0], {"sender": Sender()}, p.definitions)

    async def down(*_: Any) -> Any:
        raise ExternalUnavailable("down", retry_after=5)

    failing = dataclasses.replace(stage, handler=down)
    msg = job_message(STAGE_MAX_DELIVER)
    job = JobPayload(job_id="j", stage="send", state="SENDING", definition_version=1, inputs={})

    result = await _run(failing, job, ENVELOPE, cast(Any, msg))

    assert result is not None
    assert (result.event_type, result.payload["error_class"]) == (
        "RETRYABLE_ERROR",
        "send_unavailable",
    )
    assert msg.endings == []


def job_message(delivered: int) -> FakeMsg:
    """A job message as the stage runtime holds it, recording how it was settled."""
    return FakeMsg(b"", "wf.job.sender.send", delivered=delivered)
