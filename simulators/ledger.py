"""The simulator's ledgers: SQL over the `sim` schema, rows turned into the ports' values.

Every function runs on the caller's connection, inside the caller's transaction.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from interlock.simulators.db import Connection
from interlock.simulators.outcomes import Call, Outcome
from interlock.workflows.support.systems import (
    AccountSnapshot,
    ActionReceipt,
    ActionRequest,
    Delivery,
    PolicyDocument,
)

MISSING_PREFIX = "missing-"
"""Customer ids with this prefix are never provisioned: the account API says not found."""
CHANNEL = "email"

# The account's own `refunds_90d` is a seeded baseline; refunds executed through the
# simulator in the last 90 days (and not reversed) are added when the account is read.
_ACCOUNT = """
SELECT a.customer_id, a.account_ref, a.status, a.currency,
       a.refunds_90d + coalesce((
           SELECT sum(x.amount) FROM sim.actions x
           WHERE x.customer_id = a.customer_id AND x.action_type = 'refund'
             AND x.reversal_id IS NULL AND x.created_at > now() - interval '90 days'
       ), 0) AS refunds_90d
FROM sim.accounts a WHERE a.customer_id = $1
"""
_PROVISION = """
INSERT INTO sim.accounts (customer_id, account_ref, status, currency)
VALUES ($1, $2, 'active', 'EUR') ON CONFLICT (customer_id) DO NOTHING
"""
_POLICY = """
SELECT policy_id, version, category, max_amount, allowed_actions, requires_active_account
FROM sim.policies
"""
_INSERT_ACTION = """
INSERT INTO sim.actions
    (idempotency_key, operation_id, action_type, customer_id, amount, currency)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING *
"""
_INSERT_NOTIFICATION = """
INSERT INTO sim.notifications (delivery_key, notification_id, customer_id, template, channel)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (delivery_key) DO NOTHING
RETURNING *
"""


@dataclass(frozen=True)
class StoredAction:
    receipt: ActionReceipt
    customer_id: str
    action_type: str
    reversal_id: str | None


def account_ref(customer_id: str) -> str:
    """A stable, opaque account reference derived from the customer id."""
    return "acct-" + hashlib.sha256(customer_id.encode()).hexdigest()[:12]


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


async def account(conn: Connection, customer_id: str) -> AccountSnapshot | None:
    """The customer's account, provisioning an unknown customer as an active EUR account;
    None for ids starting with `missing-`."""
    if customer_id.startswith(MISSING_PREFIX):
        return None
    row = await conn.fetchrow(_ACCOUNT, customer_id)
    if row is None:
        # A separate statement, so a concurrent provisioning that won is seen here.
        await conn.execute(_PROVISION, customer_id, account_ref(customer_id))
        row = await conn.fetchrow(_ACCOUNT, customer_id)
    return AccountSnapshot(
        account_ref=row["account_ref"],
        customer_id=row["customer_id"],
        status=row["status"],
        currency=row["currency"],
        refunds_last_90d=row["refunds_90d"],
    )


async def current_policy(conn: Connection, category: str) -> PolicyDocument | None:
    row = await conn.fetchrow(_POLICY + " WHERE category = $1 AND current", category)
    return None if row is None else _policy(row)


async def policy_version(conn: Connection, policy_id: str, version: int) -> PolicyDocument | None:
    row = await conn.fetchrow(
        _POLICY + " WHERE policy_id = $1 AND version = $2", policy_id, version
    )
    return None if row is None else _policy(row)


async def find_action(
    conn: Connection, idempotency_key: str, *, for_update: bool = False
) -> StoredAction | None:
    """The action stored under this key; `for_update` locks it until the transaction ends."""
    query = "SELECT * FROM sim.actions WHERE idempotency_key = $1"
    row = await conn.fetchrow(query + (" FOR UPDATE" if for_update else ""), idempotency_key)
    return None if row is None else _action(row)


async def record_action(
    conn: Connection, request: ActionRequest, amount: Decimal
) -> tuple[StoredAction, bool]:
    """Store the action (with `amount`) unless its key exists. Returns the stored action
    and whether this call created it. A concurrent insert of the same key makes this wait
    for the other transaction, then return the other's row: one key, one effect."""
    row = await conn.fetchrow(
        _INSERT_ACTION,
        request.idempotency_key,
        new_id("op"),
        request.action_type,
        request.customer_id,
        amount,
        request.currency,
    )
    if row is not None:
        return _action(row), True
    stored = await find_action(conn, request.idempotency_key)
    if stored is None:  # only if the row was deleted between the two statements
        raise RuntimeError(f"action {request.idempotency_key} vanished")
    return stored, False


async def mark_reversed(conn: Connection, idempotency_key: str) -> str:
    """Record a reversal of the (locked, unreversed) action; returns the reversal id."""
    reversal_id = new_id("rev")
    await conn.execute(
        "UPDATE sim.actions SET reversal_id = $2, reversed_at = now() WHERE idempotency_key = $1",
        idempotency_key,
        reversal_id,
    )
    return reversal_id


async def record_notification(
    conn: Connection, delivery_key: str, customer_id: str, template: str
) -> tuple[Delivery, bool]:
    """Store the delivery unless its key exists; (the stored delivery, created?)."""
    args = (delivery_key, new_id("ntf"), customer_id, template, CHANNEL)
    row = await conn.fetchrow(_INSERT_NOTIFICATION, *args)
    created = row is not None
    if row is None:
        query = "SELECT * FROM sim.notifications WHERE delivery_key = $1"
        row = await conn.fetchrow(query, delivery_key)
    delivery = Delivery(
        delivery_key=row["delivery_key"],
        notification_id=row["notification_id"],
        channel=row["channel"],
    )
    return delivery, created


async def refused_before(conn: Connection, call: Call, error_class: str) -> bool:
    """Whether an earlier call of this operation, customer and key was refused `error_class`."""
    found = await conn.fetchval(
        "SELECT EXISTS (SELECT 1 FROM sim.calls WHERE customer_id = $1 AND operation = $2"
        " AND key = $3 AND outcome = $4)",
        call.customer_id,
        call.operation,
        call.key,
        f"rejected:{error_class}",
    )
    return bool(found)


async def record_call(conn: Connection, outcome: Outcome) -> None:
    call = outcome.call
    await conn.execute(
        "INSERT INTO sim.calls (operation, customer_id, key, outcome) VALUES ($1, $2, $3, $4)",
        call.operation,
        call.customer_id,
        call.key,
        outcome.outcome,
    )


def _policy(row: Any) -> PolicyDocument:
    return PolicyDocument(
        policy_id=row["policy_id"],
        policy_version=row["version"],
        category=row["category"],
        max_amount=row["max_amount"],
        allowed_actions=list(row["allowed_actions"]),
        requires_active_account=row["requires_active_account"],
    )


def _action(row: Any) -> StoredAction:
    receipt = ActionReceipt(
        idempotency_key=row["idempotency_key"],
        operation_id=row["operation_id"],
        status="succeeded",
        amount=row["amount"],
        currency=row["currency"],
    )
    return StoredAction(receipt, row["customer_id"], row["action_type"], row["reversal_id"])
