"""execute_action, notify_customer and compensate: the stages with external effects.

execute_action never issues a fresh idempotency key: the key is a function of the workflow
and the recommendation version, and every attempt — first call, retry after a timeout, or a
redelivery after a crash — reconciles by that key before acting (`execute_once`). Their
transient failures are redelivered, reconciling again, rather than retried by the workflow.
"""

from __future__ import annotations

from pydantic import BaseModel

from interlock import ShortText, StageContext, execute_once, stage
from interlock.errors import ExternalRejected
from interlock.workflows.support.payloads import ActionReceipt, Recommendation, SupportRequest
from interlock.workflows.support.ports import ACTIONS, NOTIFIER
from interlock.workflows.support.results import (
    ActionExecuted,
    Compensated,
    CompensationFailed,
    CustomerNotified,
    InvariantFailed,
)
from interlock.workflows.support.systems import ActionRequest


def action_key(tenant_id: str, workflow_id: str, recommendation_version: int) -> str:
    """A workflow id is unique per tenant only, so the tenant is part of the key."""
    return f"support-action:{tenant_id}:{workflow_id}:v{recommendation_version}"


class ActionInputs(BaseModel):
    request: SupportRequest
    recommendation: Recommendation
    recommendation_version: int


@stage(
    "execute_action",
    reads=ActionInputs,
    emits=(ActionExecuted, InvariantFailed),
    ports=(ACTIONS,),
    effects=True,
    redeliver=True,
)
async def execute_action(job: ActionInputs, ctx: StageContext) -> ActionExecuted | InvariantFailed:
    rec = job.recommendation
    key = action_key(ctx.tenant_id, ctx.workflow_id, job.recommendation_version)
    provider = ctx.port(ACTIONS)
    receipt, reconciled = await execute_once(
        provider,
        key,
        ActionRequest(
            idempotency_key=key,
            action_type=rec.action_type,
            customer_id=job.request.customer_id,
            amount=rec.amount,
            currency=rec.currency,
        ),
    )
    if receipt.amount != rec.amount or receipt.currency != rec.currency:
        return InvariantFailed(
            idempotency_key=key,
            provider_operation_id=receipt.operation_id,
            invariant="receipt_matches_recommendation",
            detail=f"{receipt.amount} {receipt.currency} != {rec.amount} {rec.currency}",
        )
    return ActionExecuted(
        idempotency_key=key,
        provider_operation_id=receipt.operation_id,
        status=receipt.status,
        amount=receipt.amount,
        currency=receipt.currency,
        reconciled=reconciled,
    )


class NotifyInputs(BaseModel):
    request: SupportRequest
    action: ActionReceipt


@stage(
    "notify_customer",
    reads=NotifyInputs,
    emits=(CustomerNotified,),
    ports=(NOTIFIER,),
    effects=True,
    system="notifier",
)
async def notify_customer(job: NotifyInputs, ctx: StageContext) -> CustomerNotified:
    action = job.action
    delivery = await ctx.port(NOTIFIER).send(
        f"support-notify:{ctx.workflow_id}:{action.provider_operation_id}",
        job.request.customer_id,
        "support-action-done",
        {"amount": str(action.amount), "currency": action.currency},
    )
    return CustomerNotified.model_validate(delivery.model_dump())


NOTHING_TO_REVERSE = "none-found-by-key"


class ActionOnRecord(BaseModel):
    """The action compensation reverses: executed, or executed with a broken invariant."""

    idempotency_key: ShortText
    provider_operation_id: ShortText


class CompensateInputs(BaseModel):
    action: ActionOnRecord | None = None
    """None when the refund's outcome is unknown: it is looked up by its key first."""
    recommendation_version: int


@stage(
    "compensate",
    reads=CompensateInputs,
    emits=(Compensated, CompensationFailed),
    ports=(ACTIONS,),
    effects=True,
    redeliver=True,
)
async def compensate(job: CompensateInputs, ctx: StageContext) -> Compensated | CompensationFailed:
    provider = ctx.port(ACTIONS)
    if job.action is not None:
        key, operation = job.action.idempotency_key, job.action.provider_operation_id
    else:
        key = action_key(ctx.tenant_id, ctx.workflow_id, job.recommendation_version)
        found = await provider.lookup(key)
        if found is None:
            # the provider holds nothing under the key: there is nothing to reverse
            return Compensated(idempotency_key=key, reversal_id=NOTHING_TO_REVERSE)
        operation = found.operation_id
    try:
        reversal = await provider.reverse(key, operation)
    except ExternalRejected as exc:
        return CompensationFailed(error_class=exc.error_class)
    return Compensated(idempotency_key=key, reversal_id=reversal)
