"""A failing stage says why: an exception the stage did not declare transient fails its job at
once as `PERMANENT_ERROR` with its class and its redacted message (not five redeliveries and an
anonymous escalation); the log line names the workflow and carries the traceback, and the
stage's span is marked as an error. Declared transient failures and effect stages keep their
redelivery."""

from __future__ import annotations

import logging
from typing import Any, ClassVar, cast

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode
from pydantic import BaseModel

from interlock import Result, StageContext, Transient, Workflow, stage
from interlock.app.wiring import typed
from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.services.runtime.failing import error_class, failure_text
from interlock.services.runtime.stage import StageResult, StageWorker, _run
from tests.support.fake_msg import FakeMsg
from tests.support.payloads import job_envelope
from tests.support.telemetry import recorded

ENVELOPE = job_envelope(workflow_id="wf-8624")
CUSTOMER = "C-1042-ACME"


def job(state: str = "S", **inputs: Any) -> JobPayload:
    return JobPayload(job_id="job-1", stage="s", state=state, definition_version=1, inputs=inputs)


class Nothing(BaseModel):
    model_config = {"extra": "allow"}


class Done(Result):
    __event__ = "DONE"


def failing(exc: Exception, **options: Any) -> Any:
    @stage("s", reads=Nothing, emits=(Done,), **options)
    async def buggy(inputs: Nothing, ctx: StageContext) -> Done:
        raise exc

    return buggy


def escalating_only() -> Any:
    """A definition whose working state takes `ESCALATE` but no `PERMANENT_ERROR`."""
    wf = Workflow("t", version=1)
    wf.request(Nothing)
    wf.result(Done)
    wf.failures("ESCALATE")
    wf.states("NEW", "S", "OK", "FAILED", terminal=("OK", "FAILED"))
    wf.stage("S", failing(ValueError("boom")))
    wf.on("NEW", "START", "S")
    wf.on("S", Done, "OK")
    wf.on("S", "ESCALATE", "FAILED", reason="escalated")
    return wf.build()


async def test_a_stage_raising_value_error_fails_its_job_at_once_with_class_and_message() -> None:
    result = await typed("t", failing(ValueError("boom")), {})(job(), ENVELOPE)

    assert (result.event_type, dict(result.payload)) == (
        "PERMANENT_ERROR",
        {"error_class": "value_error", "detail": "ValueError: boom", "system": "s"},
    )


async def test_the_log_names_the_workflow_the_class_the_message_and_the_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="interlock.stage"):
        await typed("t", failing(ValueError("boom")), {})(job(), ENVELOPE)

    text = caplog.text
    assert "ValueError: boom" in text
    assert "wf-8624" in text
    assert "in buggy" in text
    assert "raise exc" in text


async def test_the_stages_span_is_marked_as_an_error_with_the_exception() -> None:
    tracer = trace.get_tracer("test")
    spans = recorded()

    with tracer.start_as_current_span("stage s (failing)"):
        await typed("t", failing(ValueError("boom")), {})(job(), ENVELOPE)

    span = next(s for s in spans.finished() if s.name == "stage s (failing)")
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == "ValueError: boom"
    assert span.attributes is not None
    assert span.attributes["interlock.error"] == "ValueError: boom"
    (event,) = [e for e in span.events if e.name == "exception"]
    assert event.attributes is not None
    assert event.attributes["exception.type"] == "builtins.ValueError"
    assert event.attributes["exception.message"] == "ValueError: boom"


async def test_a_message_quoting_the_jobs_inputs_keeps_no_value(
    caplog: pytest.LogCaptureFixture,
) -> None:
    exc = KeyError(f"no account for customer {CUSTOMER} (card 4111 1111 1111 1111)")
    with caplog.at_level(logging.ERROR, logger="interlock.stage"):
        result = await typed("t", failing(exc), {})(job(customer=CUSTOMER), ENVELOPE)

    detail = result.payload["detail"]
    assert detail.startswith("KeyError: ")
    assert "no account for customer" in detail
    assert CUSTOMER not in detail
    assert "4111" not in detail
    assert CUSTOMER not in caplog.text
    assert "4111" not in caplog.text


def test_a_long_message_is_bounded_and_only_its_first_line_kept() -> None:
    text = failure_text(RuntimeError("x" * 5000 + "\nsecond line"))

    assert len(text) <= 200
    assert "second line" not in text
    assert error_class(RuntimeError()) == "runtime_error"
    assert error_class(type("HTTPFailure", (Exception,), {})()) == "http_failure"


class Flaky(Exception):
    retryable: ClassVar[bool] = True


@pytest.mark.parametrize("exc", [Transient("busy"), Flaky("busy")], ids=["sdk", "own"])
async def test_a_declared_transient_exception_is_raised_for_redelivery(exc: Exception) -> None:
    with pytest.raises(type(exc)):
        await typed("t", failing(exc), {})(job(), ENVELOPE)


@pytest.mark.parametrize("options", [{"effects": True}, {"redeliver": True}])
async def test_an_effect_stage_keeps_its_redelivery(options: dict[str, bool]) -> None:
    with pytest.raises(ValueError, match="boom"):
        await typed("t", failing(ValueError("boom"), **options), {})(job(), ENVELOPE)


async def test_a_state_without_permanent_error_escalates_at_once_with_the_message() -> None:
    handler = typed("t", failing(ValueError("boom")), {}, (escalating_only(),))

    result = await handler(job(), ENVELOPE)

    assert (result.event_type, dict(result.payload)) == (
        "ESCALATE",
        {"reason": "stage_failed", "detail": "ValueError: boom"},
    )


def job_message(delivered: int) -> FakeMsg:
    """A job message as the stage runtime holds it, recording how it was settled."""
    return FakeMsg(b"", "wf.job.t.s", delivered=delivered)


def worker(exc: Exception) -> StageWorker:
    async def handler(job: JobPayload, envelope: Envelope) -> StageResult:
        raise exc

    return StageWorker("t", "s", handler)


async def test_a_redelivered_failure_is_logged_with_workflow_message_and_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    msg = job_message(delivered=1)
    with caplog.at_level(logging.WARNING, logger="interlock.stage"):
        result = await _run(
            worker(Transient(f"busy for {CUSTOMER}")),
            job(customer=CUSTOMER),
            ENVELOPE,
            cast(Any, msg),
        )

    assert result is None
    assert [kind for kind, _ in msg.endings] == ["nak"]
    assert "s will retry job job-1 (delivery 1) of workflow wf-8624: Transient: busy for" in (
        caplog.text
    )
    assert "in handler" in caplog.text
    assert CUSTOMER not in caplog.text


async def test_the_last_delivery_escalates_with_the_redacted_message() -> None:
    result = await _run(
        worker(Transient(f"busy for {CUSTOMER}")),
        job(customer=CUSTOMER),
        ENVELOPE,
        cast(Any, job_message(delivered=6)),
    )

    assert result is not None
    assert (result.event_type, dict(result.payload)) == (
        "ESCALATE",
        {"reason": "stage_unavailable", "detail": "Transient: busy for <redacted>"},
    )


class Reading(BaseModel):
    amount: int


async def test_a_validation_error_names_its_fields_not_their_values(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @stage("s", reads=Nothing, emits=(Done,))
    async def misreads(inputs: Nothing, ctx: StageContext) -> Done:
        Reading.model_validate({"amount": CUSTOMER})
        return Done()

    with caplog.at_level(logging.ERROR, logger="interlock.stage"):
        result = await typed("t", misreads, {})(job(customer=CUSTOMER), ENVELOPE)

    assert (result.event_type, dict(result.payload)) == (
        "PERMANENT_ERROR",
        {"error_class": "invalid_stage_inputs", "system": "s", "detail": "ValidationError: amount"},
    )
    assert "wf-8624" in caplog.text
    assert CUSTOMER not in caplog.text


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


def test_an_exception_that_cannot_be_printed_is_described_by_its_class() -> None:
    assert failure_text(Unprintable()) == "Unprintable"
