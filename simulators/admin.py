"""Seeding and inspection of the simulator's ledgers, for the demo and tests.

Plain async functions over a database URL or an open asyncpg connection — deliberately
not over NATS, so an assertion never depends on the simulator it is checking. Each makes
sure the `sim` schema exists first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from interlock.simulators.db import Target, connection
from interlock.simulators.faults import check_plans, set_plans
from interlock.simulators.ledger import MISSING_PREFIX, account_ref
from interlock.simulators.schema import ensure_schema

_STATUSES = ("active", "suspended", "closed")
_SEED_ACCOUNT = """
INSERT INTO sim.accounts (customer_id, account_ref, status, currency, refunds_90d)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (customer_id) DO UPDATE
SET status = excluded.status, currency = excluded.currency, refunds_90d = excluded.refunds_90d
"""
# NULL filters match everything, so one statement serves every combination.
_FILTER = "({key} = $1 OR $1::text IS NULL) AND (customer_id = $2 OR $2::text IS NULL)"


async def seed_customer(
    target: Target,
    customer_id: str,
    *,
    status: str = "active",
    currency: str = "EUR",
    faults: Mapping[str, Sequence[str]] | None = None,
    refunds_90d: Decimal = Decimal(0),
) -> None:
    """Create or update the customer's account and replace the fault plans named in
    `faults` (operation → steps, e.g. `{"execute": ["lose_response"]}`), from the start.
    Raises `ValueError` for an unknown status, operation or step, or a `missing-` id."""
    if status not in _STATUSES:
        raise ValueError(f"status must be one of {_STATUSES}, got {status!r}")
    if customer_id.startswith(MISSING_PREFIX):
        raise ValueError(f"{MISSING_PREFIX}… customers are never provisioned")
    check_plans(faults or {})
    async with connection(target) as conn:
        await ensure_schema(conn)
        async with conn.transaction():
            ref = account_ref(customer_id)
            await conn.execute(_SEED_ACCOUNT, customer_id, ref, status, currency, refunds_90d)
            await set_plans(conn, customer_id, faults or {})


async def plan_effect_faults(
    target: Target, workflow_id: str, faults: Mapping[str, Sequence[str]]
) -> None:
    """Replace the internal-effects provider's fault plans (`effect`, `effect_reverse`) for
    the effects of this workflow, from the start; `{"effect": []}` clears one. Raises
    `ValueError` for an unknown operation or step."""
    check_plans(faults)
    async with connection(target) as conn:
        await ensure_schema(conn)
        async with conn.transaction():
            await set_plans(conn, workflow_id, faults)


async def publish_policy(
    target: Target,
    policy_id: str,
    category: str,
    max_amount: Decimal,
    allowed_actions: Sequence[str],
    *,
    requires_active_account: bool = True,
) -> int:
    """Publish the next version of `policy_id` as the current policy of `category` (the
    previous current one stays readable by version). Returns the new version number."""
    async with connection(target) as conn:
        await ensure_schema(conn)
        async with conn.transaction():
            # Serialises publishers of one policy, so two never pick the same number.
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", policy_id)
            version = int(
                await conn.fetchval(
                    "SELECT coalesce(max(version), 0) + 1 FROM sim.policies WHERE policy_id = $1",
                    policy_id,
                )
            )
            await conn.execute(
                "UPDATE sim.policies SET current = false WHERE category = $1 AND current",
                category,
            )
            await conn.execute(
                "INSERT INTO sim.policies (policy_id, version, category, max_amount,"
                " allowed_actions, requires_active_account, current)"
                " VALUES ($1, $2, $3, $4, $5, $6, true)",
                policy_id,
                version,
                category,
                max_amount,
                list(allowed_actions),
                requires_active_account,
            )
    return version


async def action_count(
    target: Target, idempotency_key: str | None = None, customer_id: str | None = None
) -> int:
    """Actions performed (reversed ones included), filtered by key and/or customer."""
    return await _count(target, "sim.actions", "idempotency_key", (idempotency_key, customer_id))


async def reversal_count(
    target: Target, idempotency_key: str | None = None, customer_id: str | None = None
) -> int:
    """Actions that have been reversed, filtered by key and/or customer."""
    filters = (idempotency_key, customer_id)
    return await _count(
        target, "sim.actions", "idempotency_key", filters, "reversal_id IS NOT NULL"
    )


async def notification_count(
    target: Target, delivery_key: str | None = None, customer_id: str | None = None
) -> int:
    """Notifications delivered, filtered by delivery key and/or customer."""
    filters = (delivery_key, customer_id)
    return await _count(target, "sim.notifications", "delivery_key", filters)


async def calls(target: Target, customer_id: str) -> list[dict[str, Any]]:
    """Every call logged for this customer, oldest first: `{id, operation, customer_id,
    key, outcome, at}`."""
    async with connection(target) as conn:
        await ensure_schema(conn)
        rows = await conn.fetch(
            "SELECT id, operation, customer_id, key, outcome, at FROM sim.calls"
            " WHERE customer_id = $1 ORDER BY id",
            customer_id,
        )
    return [dict(row) for row in rows]


async def _count(
    target: Target,
    table: str,
    key_column: str,
    filters: tuple[str | None, str | None],
    condition: str = "true",
) -> int:
    """Rows of `table` meeting `condition`, filtered by (key, customer id) where not None."""
    query = f"SELECT count(*) FROM {table} WHERE ({condition}) AND " + _FILTER.format(
        key=key_column
    )
    async with connection(target) as conn:
        await ensure_schema(conn)
        return int(await conn.fetchval(query, *filters))
