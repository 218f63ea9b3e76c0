"""The simulator's ledgers, in their own schema `sim` (the `public` schema is the
projector's), and the default policies.

Creation is idempotent and safe under concurrent start-ups: the DDL runs in one
transaction under an advisory lock, because concurrent `CREATE … IF NOT EXISTS` can still
collide on the system catalogues.
"""

from __future__ import annotations

from decimal import Decimal

from interlock.simulators.db import Target, connection

_LOCK_KEY = "interlock.sim.schema"
_LAST_OBJECT = "sim.effects_by_reversal"
"""Created last, in the same transaction as the rest: if it exists, everything does."""

_DDL = """
CREATE TABLE IF NOT EXISTS sim.accounts (
    customer_id text PRIMARY KEY,
    account_ref text NOT NULL,
    status      text NOT NULL CHECK (status IN ('active', 'suspended', 'closed')),
    currency    text NOT NULL,
    refunds_90d numeric(14, 2) NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS sim.policies (
    policy_id               text NOT NULL,
    version                 integer NOT NULL,
    category                text NOT NULL,
    max_amount              numeric(14, 2) NOT NULL,
    allowed_actions         text[] NOT NULL,
    requires_active_account boolean NOT NULL DEFAULT true,
    current                 boolean NOT NULL DEFAULT false,
    PRIMARY KEY (policy_id, version)
);
CREATE UNIQUE INDEX IF NOT EXISTS policies_one_current ON sim.policies (category) WHERE current;
CREATE TABLE IF NOT EXISTS sim.actions (
    idempotency_key text PRIMARY KEY,
    operation_id    text NOT NULL UNIQUE,
    action_type     text NOT NULL,
    customer_id     text NOT NULL,
    amount          numeric(14, 2) NOT NULL,
    currency        text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    reversal_id     text UNIQUE,
    reversed_at     timestamptz
);
CREATE TABLE IF NOT EXISTS sim.notifications (
    delivery_key    text PRIMARY KEY,
    notification_id text NOT NULL UNIQUE,
    customer_id     text NOT NULL,
    template        text NOT NULL,
    channel         text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS sim.fault_plans (
    customer_id text NOT NULL,
    operation   text NOT NULL,
    steps       jsonb NOT NULL CHECK (jsonb_typeof(steps) = 'array'),
    cursor      integer NOT NULL DEFAULT 0,
    PRIMARY KEY (customer_id, operation)
);
CREATE TABLE IF NOT EXISTS sim.calls (
    id          bigserial PRIMARY KEY,
    operation   text NOT NULL,
    customer_id text,
    key         text,
    outcome     text NOT NULL,
    at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS calls_by_customer ON sim.calls (customer_id, id);
CREATE TABLE IF NOT EXISTS sim.effects (
    idempotency_key text PRIMARY KEY,
    operation_id    text NOT NULL UNIQUE,
    workflow_id     text NOT NULL,
    effect          text NOT NULL,
    authorized_by   jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS effects_by_workflow ON sim.effects (workflow_id);
-- added after the table first shipped: a ledger created before gains the column here
ALTER TABLE sim.effects ADD COLUMN IF NOT EXISTS reversal_id text;
ALTER TABLE sim.effects ADD COLUMN IF NOT EXISTS reversed_at timestamptz;
CREATE UNIQUE INDEX IF NOT EXISTS effects_by_reversal ON sim.effects (reversal_id);
"""

# (policy_id, version, category, max_amount, allowed_actions, current)
DEFAULT_POLICIES: tuple[tuple[str, int, str, Decimal, list[str], bool], ...] = (
    ("refunds", 1, "billing", Decimal("100.00"), ["refund", "account_credit"], False),
    ("refunds", 2, "billing", Decimal("250.00"), ["refund", "account_credit"], True),
    ("access-credits", 1, "access", Decimal("50.00"), ["account_credit"], True),
    ("tech-goodwill", 1, "technical", Decimal("30.00"), ["account_credit"], True),
)

# Without a conflict target, DO NOTHING also covers the one-current-per-category index: a
# later published version stays current across restarts.
_SEED_POLICY = """
INSERT INTO sim.policies
    (policy_id, version, category, max_amount, allowed_actions, current)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT DO NOTHING
"""


async def ensure_schema(target: Target) -> None:
    """Create the `sim` schema, its tables and the default policies if absent.

    Cheap when everything exists (no DDL runs, so no table locks are taken). The schema is
    created only when missing: a simulator whose role owns the schema (`interlock migrate`
    makes it so) may not create schemas at all. Raises asyncpg's errors if the database
    cannot be reached.
    """
    async with connection(target) as conn:
        if await conn.fetchval("SELECT to_regclass($1)", _LAST_OBJECT) is None:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(hashtext($1))", _LOCK_KEY)
                if await conn.fetchval("SELECT to_regnamespace('sim')") is None:
                    await conn.execute("CREATE SCHEMA sim")
                await conn.execute(_DDL)
        await conn.executemany(_SEED_POLICY, DEFAULT_POLICIES)
