"""The internal-effects simulator behind `SimEffectProvider`, against real NATS and
PostgreSQL: one effect per key however often it is asked, its authority recorded beside it,
reconcile-first execution finding it again, one reversal per key, and fault plans per
workflow id."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import asyncpg
import nats
import pytest
from nats.aio.client import Client

from interlock.errors import ExternalRejected, ExternalTimeout
from interlock.services.adapters.sim import SimEffectProvider
from interlock.services.effects import execute_once
from interlock.services.ports import EffectRequest
from interlock.simulators import effect_rows, ensure_schema, plan_effect_faults
from tests.support.simulation import simulator

pytestmark = pytest.mark.timeout(60)
AUTHORITY = {"authorization_id": "auth-1", "basis": "route"}


def request(
    key: str = "request-effect:wf-1:create_follow_up", effect: str = "create_follow_up"
) -> EffectRequest:
    return EffectRequest(
        idempotency_key=key, workflow_id="wf-1", effect=effect, authorized_by=AUTHORITY
    )


@pytest.fixture
async def nc(database_url: str, nats_url: str) -> AsyncIterator[Client]:
    """A connection to the test's NATS, with a simulator serving it."""
    async with simulator(database_url, nats_url):
        client = await nats.connect(nats_url)
        try:
            yield client
        finally:
            await client.close()


async def test_concurrent_executions_of_one_key_make_one_effect(
    nc: Client, database_url: str
) -> None:
    provider = SimEffectProvider(nc, timeout=5.0)
    receipts = await asyncio.gather(*(provider.execute(request()) for _ in range(8)))
    assert len({r.operation_id for r in receipts}) == 1
    (row,) = await effect_rows(database_url, ["wf-1"])
    assert (row["effect"], row["authorized_by"]) == ("create_follow_up", AUTHORITY)


async def test_an_executed_effect_is_found_again_by_its_key(nc: Client) -> None:
    provider = SimEffectProvider(nc, timeout=5.0)
    assert await provider.lookup(request().idempotency_key) is None
    first, reconciled = await execute_once(provider, request().idempotency_key, request())
    again, found = await execute_once(provider, request().idempotency_key, request())
    assert (reconciled, found, again.operation_id) == (False, True, first.operation_id)


async def test_an_effect_outside_the_allowlist_is_refused_with_nothing_recorded(
    nc: Client, database_url: str
) -> None:
    provider = SimEffectProvider(nc, timeout=5.0)
    with pytest.raises(ExternalRejected) as refused:
        await provider.execute(request(key="k", effect="delete_record"))
    assert refused.value.error_class == "unsupported_effect"
    assert await effect_rows(database_url, ["wf-1"]) == []


async def test_an_effect_is_reversed_once_per_key(nc: Client, database_url: str) -> None:
    provider = SimEffectProvider(nc, timeout=5.0)
    receipt = await provider.execute(request())

    reversals = await asyncio.gather(
        *(provider.reverse(receipt.idempotency_key, receipt.operation_id) for _ in range(4))
    )

    assert len(set(reversals)) == 1
    (row,) = await effect_rows(database_url, ["wf-1"])
    assert row["reversal_id"] == reversals[0]


@pytest.mark.parametrize(
    ("key", "operation", "error_class"),
    [("no-such-key", "eff-x", "action_not_found"), (None, "eff-other", "operation_mismatch")],
)
async def test_a_reversal_of_nothing_or_of_another_operation_is_refused(
    nc: Client, database_url: str, key: str | None, operation: str, error_class: str
) -> None:
    provider = SimEffectProvider(nc, timeout=5.0)
    receipt = await provider.execute(request())

    with pytest.raises(ExternalRejected) as refused:
        await provider.reverse(key or receipt.idempotency_key, operation)

    assert refused.value.error_class == error_class
    (row,) = await effect_rows(database_url, ["wf-1"])
    assert row["reversal_id"] is None


async def test_a_workflows_effect_faults_are_planned_by_its_id(
    nc: Client, database_url: str
) -> None:
    provider = SimEffectProvider(nc, timeout=0.5)
    await plan_effect_faults(database_url, "wf-1", {"effect": ["timeout"]})
    with pytest.raises(ExternalTimeout):
        await provider.execute(request())
    assert await effect_rows(database_url, ["wf-1"]) == []  # nothing was done

    receipt = await provider.execute(request())  # the plan is spent
    await plan_effect_faults(database_url, "wf-1", {"effect_reverse": ["fail"]})
    with pytest.raises(ExternalRejected) as refused:
        await provider.reverse(receipt.idempotency_key, receipt.operation_id)
    assert refused.value.error_class == "reversal_refused"


async def test_a_ledger_created_before_reversals_gains_them(database_url: str) -> None:
    await ensure_schema(database_url)
    conn = await asyncpg.connect(database_url)
    try:
        await conn.execute(
            "DROP INDEX sim.effects_by_reversal;"
            " ALTER TABLE sim.effects DROP COLUMN reversal_id, DROP COLUMN reversed_at"
        )
        await ensure_schema(database_url)
        columns = await conn.fetch(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = 'sim' AND table_name = 'effects'"
        )
    finally:
        await conn.close()
    assert {"reversal_id", "reversed_at"} <= {c["column_name"] for c in columns}
