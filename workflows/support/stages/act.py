"""execute_action, notify_customer and compensate: the stages with external effects.

execute_action never issues a fresh idempotency key: the key is a function of the workflow
and the recommendation version, and every attempt — first call, retry after a timeout, or a
redelivery after a crash — reconciles by that key before acting (`services.effects`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from interlock import ExternalRejected
from interlock.contracts.envelope import Envelope
from interlock.contracts.jobs import JobPayload
from interlock.services.effects import execute_once
from interlock.services.ports import ActionProvider, ActionRequest, Notifier
from interlock.services.runtime.calls import call, refused
from interlock.services.runtime.stage import StageResult


def action_key(tenant_id: str, workflow_id: str, recommendation_version: int) -> str:
    """A workflow id is unique per tenant only, so the tenant is part of the key."""
    return f"support-action:{tenant_id}:{workflow_id}:v{recommendation_version}"


@dataclass(frozen=True)
class ExecuteAction:
    provider: ActionProvider

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        rec, request = job.inputs["recommendation"], job.inputs["request"]
        key = action_key(
            envelope.tenant_id, envelope.workflow_id or "", job.inputs["recommendation_version"]
        )
        try:
            receipt, reconciled = await execute_once(
                self.provider,
                key,
                ActionRequest(
                    idempotency_key=key,
                    action_type=rec["action_type"],
                    customer_id=request["customer_id"],
                    amount=Decimal(rec["amount"]),
                    currency=rec["currency"],
                ),
            )
        except ExternalRejected as exc:
            return refused(exc)
        payload = {
            "idempotency_key": key,
            "provider_operation_id": receipt.operation_id,
        }
        if receipt.amount != Decimal(rec["amount"]) or receipt.currency != rec["currency"]:
            return StageResult(
                "POST_ACTION_INVARIANT_FAILED",
                {
                    **payload,
                    "invariant": "receipt_matches_recommendation",
                    "detail": f"{receipt.amount} {receipt.currency} != {rec['amount']} "
                    f"{rec['currency']}",
                },
            )
        return StageResult(
            "ACTION_EXECUTED",
            {
                **payload,
                "status": receipt.status,
                "amount": str(receipt.amount),
                "currency": receipt.currency,
                "reconciled": reconciled,
            },
        )


@dataclass(frozen=True)
class NotifyCustomer:
    notifier: Notifier

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        action: dict[str, Any] = job.inputs["action"]
        key = f"support-notify:{envelope.workflow_id}:{action['provider_operation_id']}"
        delivery = await call(
            self.notifier.send(
                key,
                job.inputs["request"]["customer_id"],
                "support-action-done",
                {"amount": str(action["amount"]), "currency": str(action["currency"])},
            ),
            "notifier",
        )
        if isinstance(delivery, StageResult):
            return delivery
        return StageResult("CUSTOMER_NOTIFIED", delivery.model_dump(mode="json"))


@dataclass(frozen=True)
class Compensate:
    provider: ActionProvider

    async def __call__(self, job: JobPayload, envelope: Envelope) -> StageResult:
        action = job.inputs["action"]
        key = action["idempotency_key"]
        try:
            reversal = await self.provider.reverse(key, action["provider_operation_id"])
        except ExternalRejected as exc:
            return StageResult("COMPENSATION_FAILED", {"error_class": exc.error_class})
        return StageResult(
            "COMPENSATION_SUCCEEDED", {"idempotency_key": key, "reversal_id": reversal}
        )
