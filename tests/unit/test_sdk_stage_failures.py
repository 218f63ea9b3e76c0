"""How the runtime reports a typed stage's failures: a transient failure names the stage's
`system` in its error class, or is raised for redelivery when the stage says so; `ask`
records the model call and validates the answer."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from interlock import ModelReply, ModelRequest, Result, StageContext, ask, stage
from interlock.app.wiring import typed
from interlock.contracts.ids import result_event_id
from interlock.contracts.jobs import JobPayload
from interlock.errors import ExternalUnavailable, OutcomeUnknown
from tests.support.payloads import job_envelope

ENVELOPE = job_envelope(correlation_id="case-1")
JOB = JobPayload(job_id="job-1", stage="s", state="S", definition_version=1, inputs={})


class Nothing(BaseModel):
    pass


class Done(Result):
    __event__ = "DONE"
    seen: str


def failing(exc: Exception, **options: Any) -> Any:
    @stage("s", reads=Nothing, emits=(Done,), **options)
    async def run(job: Nothing, ctx: StageContext) -> Done:
        raise exc

    return typed("t", run, {})


async def test_a_transient_failure_names_the_stages_system() -> None:
    named = await failing(ExternalUnavailable("down", retry_after=3.0), system="ledger")(
        JOB, ENVELOPE
    )
    unnamed = await failing(ExternalUnavailable("down"))(JOB, ENVELOPE)

    assert (named.event_type, dict(named.payload)) == (
        "RETRYABLE_ERROR",
        {"error_class": "ledger_unavailable", "system": "ledger", "retry_after_s": 3.0},
    )
    assert unnamed.payload["error_class"] == "s_unavailable"


async def test_a_redelivered_stage_raises_its_transient_failure() -> None:
    with pytest.raises(OutcomeUnknown):
        await failing(OutcomeUnknown("?", idempotency_key="k"), redeliver=True)(JOB, ENVELOPE)


async def test_the_context_names_the_case_and_the_result_event() -> None:
    @stage("s", reads=Nothing, emits=(Done,))
    async def run(job: Nothing, ctx: StageContext) -> Done:
        return Done(seen=f"{ctx.correlation_id} {ctx.result_event_id} {ctx.repair}")

    result = await typed("t", run, {})(JOB, ENVELOPE)

    assert result.payload == {"seen": f"case-1 {result_event_id('job-1')} False"}


class Model:
    def __init__(self, output: dict[str, Any]) -> None:
        self.output, self.requests = output, list[ModelRequest]()

    async def complete(self, request: ModelRequest) -> ModelReply:
        self.requests.append(request)
        return ModelReply(output=self.output, model="m", model_version="m-1", latency_ms=2.0)


class Answer(BaseModel):
    word: str


def ctx(repair: bool = False) -> StageContext:
    return StageContext("t", "wf-1", "acme", "job-1", 1, "k", repair=repair)


REQUEST = ModelRequest(task="t", prompt_version="p-1", inputs={}, output_schema={})


async def test_ask_validates_the_answer_and_records_the_call() -> None:
    good = await ask(Model({"word": "yes"}), REQUEST, Answer, ctx())
    bad = await ask(Model({"number": 1}), REQUEST, Answer, ctx())

    assert (good.valid, good.value, good.call.validation) == (True, Answer(word="yes"), "passed")
    assert (bad.valid, bad.call.validation, bad.call.output) == (False, "failed", {"number": 1})
    assert "word" in bad.call.errors[0]


async def test_a_repair_asks_again_with_the_previous_errors() -> None:
    bad = await ask(Model({}), REQUEST, Answer, ctx())
    model = Model({"word": "fixed"})

    again = await ask(model, REQUEST, Answer, ctx(repair=True), invalid=bad.call)

    assert model.requests[0].repair_errors == bad.call.errors
    assert again.call.repair is True
