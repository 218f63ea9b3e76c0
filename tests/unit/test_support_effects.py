"""execute_action: one refund per workflow and recommendation version, and a workflow id is
its tenant's only: another tenant's workflow of the same id gets a refund of its own."""

from __future__ import annotations

from interlock.app.wiring import TypedHandler
from interlock.contracts.jobs import JobPayload
from interlock.workflows.support.stages.act import execute_action
from tests.support.fake_ports import Actions
from tests.support.payloads import PAYLOADS, REQUEST, envelope


def execute_with(provider: Actions) -> TypedHandler:
    """The stage as the runtime runs it, on `provider`."""
    return TypedHandler("support", execute_action, {"actions": provider})


JOB = JobPayload(
    job_id="job-1",
    stage="execute_action",
    state="EXECUTING_ACTION",
    definition_version=2,
    inputs={
        "request": REQUEST,
        "recommendation": PAYLOADS["RECOMMENDATION_GENERATED"],
        "recommendation_version": 1,
    },
)


async def test_a_redelivered_job_reconciles_to_the_one_refund() -> None:
    provider, job_envelope = Actions(), envelope("JOB", workflow_id="wf-1", payload={})

    first = await execute_with(provider)(JOB, job_envelope)
    again = await execute_with(provider)(JOB, job_envelope)

    assert len(provider.receipts) == 1
    assert (first.payload["reconciled"], again.payload["reconciled"]) == (False, True)


async def test_another_tenants_workflow_of_the_same_id_gets_its_own_refund() -> None:
    provider = Actions()
    mine = envelope("JOB", workflow_id="wf-1", payload={})
    theirs = envelope("JOB", workflow_id="wf-1", payload={}, tenant_id="globex")

    await execute_with(provider)(JOB, mine)
    other = await execute_with(provider)(JOB, theirs)

    assert len(provider.receipts) == 2
    assert other.payload["reconciled"] is False
