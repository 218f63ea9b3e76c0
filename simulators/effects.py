"""Handlers of the subjects with effects: execute, reverse, notify.

Guarantees: one effect per idempotency (or delivery) key, whatever the number or overlap
of calls; a fault step is consumed in the same transaction as the effect it shapes. Steps:
`lose_response` commits the effect and answers nothing (the ambiguous write);
`mismatch` stores and answers an amount 1.00 above the request (a post-action invariant
failure); `refuse` refuses an action and `fail` a reversal or a delivery, with nothing done.
A refused action or delivery stays refused under its key (a caller that missed the answer and
asks again meets the same refusal); a refused reversal may be asked again and succeed.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from interlock.simulators import ledger
from interlock.simulators.db import Connection
from interlock.simulators.outcomes import (
    ACCOUNT_INACTIVE,
    ACCOUNT_NOT_FOUND,
    ACTION_NOT_FOUND,
    ACTION_REFUSED,
    CURRENCY_MISMATCH,
    INVALID_AMOUNT,
    OPERATION_MISMATCH,
    REVERSAL_REFUSED,
    UNDELIVERABLE,
    UNSUPPORTED_ACTION,
    BadRequest,
    Call,
    Outcome,
    gate,
    text,
)
from interlock.workflows.support.systems import ActionRequest

ACTION_TYPES = frozenset({"refund", "account_credit"})
MISMATCH_OFFSET = Decimal("1.00")
_MAX_AMOUNT = Decimal("1000000000")
_CENT = Decimal("0.01")


async def execute(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.action.execute`: perform the action once per key; a repeat gets the original
    receipt (outcome `duplicate`), never a second effect."""
    try:
        request = ActionRequest.model_validate(body)
    except ValidationError as exc:
        raise BadRequest(f"not an action request: {exc.error_count()} errors") from exc
    call = Call("execute", request.customer_id, request.idempotency_key)
    step, early = await gate(conn, call)
    if early is not None:
        return early
    stored = await ledger.find_action(conn, request.idempotency_key)
    if stored is None:
        refusal = await _refusal(conn, call, request)
        if refusal is not None:
            return refusal
        if step.kind == "refuse" or await ledger.refused_before(conn, call, ACTION_REFUSED):
            return call.rejected(ACTION_REFUSED, "the provider refused the action")
        offset = MISMATCH_OFFSET if step.kind == "mismatch" else Decimal(0)
        stored, created = await ledger.record_action(conn, request, request.amount + offset)
    else:
        created = False
    if step.kind == "lose_response":
        return call.silent("lose_response")
    outcome = ("mismatch" if step.kind == "mismatch" else "ok") if created else "duplicate"
    return call.ok(stored.receipt.model_dump(mode="json"), outcome)


async def reverse(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.action.reverse`: reverse once per key; a repeat returns the same reversal id."""
    key, operation_id = text(body, "idempotency_key"), text(body, "operation_id")
    stored = await ledger.find_action(conn, key, for_update=True)
    if stored is None:
        return Call("reverse", None, key).rejected(ACTION_NOT_FOUND, "no action under this key")
    call = Call("reverse", stored.customer_id, key)
    step, early = await gate(conn, call)
    if early is not None:
        return early
    if step.kind == "fail":
        return call.rejected(REVERSAL_REFUSED, "the provider refused the reversal")
    if stored.receipt.operation_id != operation_id:
        return call.rejected(OPERATION_MISMATCH, "operation id does not match the key")
    if stored.reversal_id is not None:
        return call.ok({"reversal_id": stored.reversal_id}, "duplicate")
    return call.ok({"reversal_id": await ledger.mark_reversed(conn, key)})


async def notify(conn: Connection, body: dict[str, Any]) -> Outcome:
    """`sim.notify.send`: deliver once per delivery key; a repeat gets the first answer, a
    delivery or, once a key was found undeliverable, the same refusal."""
    key, customer_id = text(body, "delivery_key"), text(body, "customer_id")
    template = text(body, "template")
    fields = body.get("fields", {})
    if not isinstance(fields, dict) or not all(isinstance(v, str) for v in fields.values()):
        raise BadRequest("fields must map names to strings")
    call = Call("notify", customer_id, key)
    step, early = await gate(conn, call)
    if early is not None:
        return early
    if step.kind == "fail" or await ledger.refused_before(conn, call, UNDELIVERABLE):
        return call.rejected(UNDELIVERABLE, "the notification could not be delivered")
    if await ledger.account(conn, customer_id) is None:
        return call.rejected(ACCOUNT_NOT_FOUND, f"no account for customer {customer_id}")
    delivery, created = await ledger.record_notification(conn, key, customer_id, template)
    return call.ok(delivery.model_dump(mode="json"), "ok" if created else "duplicate")


async def _refusal(conn: Connection, call: Call, request: ActionRequest) -> Outcome | None:
    """Why a new action cannot be performed, or None if it can."""
    amount = request.amount
    if request.action_type not in ACTION_TYPES:
        return call.rejected(
            UNSUPPORTED_ACTION, f"action type must be one of {sorted(ACTION_TYPES)}"
        )
    if not (amount.is_finite() and 0 < amount < _MAX_AMOUNT and amount == amount.quantize(_CENT)):
        return call.rejected(INVALID_AMOUNT, "amount must be positive with at most 2 decimals")
    account = await ledger.account(conn, request.customer_id)
    if account is None:
        return call.rejected(ACCOUNT_NOT_FOUND, f"no account for customer {request.customer_id}")
    if account.status != "active":
        return call.rejected(ACCOUNT_INACTIVE, f"account is {account.status}")
    if account.currency != request.currency:
        return call.rejected(CURRENCY_MISMATCH, f"account currency is {account.currency}")
    return None
