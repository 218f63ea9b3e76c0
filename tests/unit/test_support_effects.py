"""execute_action: one refund per workflow and recommendation version, and a workflow id is
its tenant's only: another tenant's workflow of the same id gets a refund of its own."""

from __future__ import annotations

import itertools

from interlock.contracts.jobs import JobPayload
from interlock.services.ports import ActionReceipt, ActionRequest
from interlock.wiring import TypedHandler
from interlock.workflows.support.stages.act import execute_action
from tests.support.payloads import PAYLOADS, REQUEST, envelope

_ops = itertools.count(1)


class Provider:
    """An action provider that performs each idempotency key once."""

    def __init__(self) -> None:
        self.receipts: dict[str, ActionReceipt] = {}

    async def execute(self, request: ActionRequest) -> ActionReceipt:
        return self.receipts.setdefault(
            request.idempotency_key,
            ActionReceipt(
                idempotency_key=request.idempotency_key,
                operation_id=f"op-{next(_ops)}",
                status="succeeded",
                amount=request.amount,
                currency=request.currency,
            ),
        )

    async def lookup(self, idempotency_key: str) -> ActionReceipt | None:
        return self.receipts.get(idempotency_key)

    async def reverse(self, idempotency_key: str, operation_id: str) -> str:
        raise AssertionError("not reversed here")


def ExecuteAction(provider: Provider) -> TypedHandler:
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
    provider, job_envelope = Provider(), envelope("JOB", workflow_id="wf-1", payload={})

    first = await ExecuteAction(provider)(JOB, job_envelope)
    again = await ExecuteAction(provider)(JOB, job_envelope)

    assert len(provider.receipts) == 1
    assert (first.payload["reconciled"], again.payload["reconciled"]) == (False, True)


async def test_another_tenants_workflow_of_the_same_id_gets_its_own_refund() -> None:
    provider = Provider()
    mine = envelope("JOB", workflow_id="wf-1", payload={})
    theirs = envelope("JOB", workflow_id="wf-1", payload={}, tenant_id="globex")

    await ExecuteAction(provider)(JOB, mine)
    other = await ExecuteAction(provider)(JOB, theirs)

    assert len(provider.receipts) == 2
    assert other.payload["reconciled"] is False
