"""What a shadow run asks again: the stage's own request, captured before any model answers,
and nothing when the stage would reach another system first; the fields it compares."""

from __future__ import annotations

from pydantic import BaseModel

from interlock import ModelClient, ModelRequest, Port, StageContext, stage
from interlock.contracts.jobs import JobPayload
from interlock.ops.evaluation import Case
from interlock.ops.shadow import Dispatched, captured_request, compared_fields
from interlock.workflows.support.prompts import CLASSIFY, RECOMMEND
from interlock.workflows.support.results import Classified
from interlock.workflows.support.stages.classify import classify

OTHER: Port[object] = Port("ledger")
MODEL: Port[ModelClient] = Port("model", protocol=ModelClient, asks_model=True)


class Reads(BaseModel):
    note: str


@stage("peek", reads=Reads, emits=(Classified,), ports=(OTHER, MODEL))
async def peeks_first(job: Reads, ctx: StageContext) -> Classified:
    ctx.port(OTHER)  # not bound in a shadow run: the stage stops here
    raise AssertionError("unreachable")


def _job(stage_name: str, inputs: dict[str, object]) -> Dispatched:
    job = JobPayload(
        job_id="job-1", stage=stage_name, state="S", definition_version=1, inputs=inputs
    )
    return Dispatched(job, "case-1", "support", "acme", "wf-1")


async def test_the_stages_request_is_captured_with_the_jobs_inputs() -> None:
    request = {"customer_id": "c", "subject": "Charged twice", "body": "Twice this month."}

    captured = await captured_request(classify, _job("classify", {"request": request}))

    assert isinstance(captured, ModelRequest)
    assert captured.inputs == {"subject": "Charged twice", "body": "Twice this month."}
    assert captured.case_key == "case-1"


async def test_a_stage_that_reaches_another_system_first_is_not_asked() -> None:
    assert await captured_request(peeks_first, _job("peek", {"note": "n"})) is None


def test_the_compared_fields_come_from_the_golden_set_else_the_label_else_the_approved() -> None:
    golden = [Case({}, {"category": "billing"})]

    assert compared_fields(CLASSIFY, golden) == ("category",)
    assert compared_fields(CLASSIFY) == ("category",)
    assert compared_fields(RECOMMEND) == ("amount",)
