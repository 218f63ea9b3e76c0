"""Payloads of the `support` workflow: the request, each stage's result, signals."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import Field

from interlock import (
    Amount,
    Currency,
    ModelCall,
    Payload,
    PolicyCheck,
    ShortText,
    Text,
)

Category = Literal["billing", "access", "technical"]
ActionType = Literal["refund", "account_credit", "no_action"]


class SupportRequest(Payload):
    """The `START` payload an upstream system publishes on `wf.in.request.support`."""

    customer_id: ShortText
    subject: Annotated[str, Field(min_length=1, max_length=500)]
    body: Annotated[str, Field(min_length=1, max_length=20_000)]
    amount: Amount | None = None
    currency: Currency | None = None


class Classification(Payload):
    category: Category
    confidence: float = Field(ge=0, le=1)
    call: ModelCall


class PolicyEvidence(Payload):
    policy_id: ShortText
    policy_version: int = Field(ge=1)
    category: Category
    max_amount: Amount
    allowed_actions: list[ActionType]
    requires_active_account: bool = True


class AccountEvidence(Payload):
    account_ref: ShortText
    status: Literal["active", "suspended", "closed"]
    currency: Currency
    refunds_last_90d: Amount = Decimal(0)


class Recommendation(Payload):
    action_type: ActionType
    amount: Amount
    currency: Currency
    rationale: Text = ""
    evidence_refs: list[ShortText] = Field(default_factory=list)
    call: ModelCall


class ValidationReport(Payload):
    """The validator's typed verdict on one recommendation version, with its evidence."""

    passed: bool
    recommendation_version: int = Field(ge=1)
    policy_ref: ShortText
    checks: list[PolicyCheck]


class Approval(Payload):
    recommendation_version: int = Field(ge=1)
    amount: Amount
    comment: Text | None = None


class ReviewerRejection(Payload):
    recommendation_version: int | None = Field(default=None, ge=1)
    reason: Text = ""


class ChangeRequest(Payload):
    recommendation_version: int = Field(ge=1)
    feedback: Text


class ActionReceipt(Payload):
    idempotency_key: ShortText
    provider_operation_id: ShortText
    status: Literal["succeeded"]
    amount: Amount
    currency: Currency
    reconciled: bool = False
    """True when the receipt was found by key after an ambiguous call, not returned by it."""


class InvariantFailure(Payload):
    idempotency_key: ShortText
    provider_operation_id: ShortText
    invariant: ShortText
    detail: Text = ""


class NotificationReceipt(Payload):
    delivery_key: ShortText
    notification_id: ShortText
    channel: Literal["email", "sms"]


class CompensationReceipt(Payload):
    idempotency_key: ShortText
    reversal_id: ShortText


class Cancellation(Payload):
    reason: Text = ""
