"""The simulated action provider through its adapter, against real NATS and PostgreSQL:
idempotent executes (also when concurrent), lost responses, timeouts, outages, slow and
mismatched effects reconcilable by lookup, refusals — and idempotent reversal.

Each test runs the simulator as a task, talks to it only through the adapters (as stage
services do) and checks the ledgers through the admin functions, never through the
simulator it is checking.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest
from nats.aio.client import Client

from interlock.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable
from interlock.simulators import action_count, reversal_count, seed_customer
from interlock.workflows.support.sim import SimAccountApi, SimActionProvider
from tests.support.simulation import (
    CUSTOMER,
    IMPATIENT,
    PATIENT,
    outcomes,
    refund,
    simulated_database,
)
from tests.support.waiting import until

pytestmark = pytest.mark.timeout(60)

# The `db` these tests take: the database URL, with a simulator serving it for the test.
db = simulated_database


# --- actions: idempotency and reconciliation ---------------------------------------------


async def test_repeated_execute_returns_the_original_receipt_and_one_effect(
    db: str, nc: Client
) -> None:
    provider = SimActionProvider(nc, PATIENT)
    first = await provider.execute(refund("k-1"))
    second = await provider.execute(refund("k-1"))
    assert second == first
    assert first.amount == Decimal("12.50")
    assert await action_count(db, idempotency_key="k-1") == 1
    assert await outcomes(db) == ["execute:ok", "execute:duplicate"]


async def test_concurrent_executes_with_one_key_apply_once(db: str, nc: Client) -> None:
    provider = SimActionProvider(nc, PATIENT)
    receipts = await asyncio.gather(*(provider.execute(refund("k-race")) for _ in range(10)))
    assert len({r.operation_id for r in receipts}) == 1
    assert await action_count(db, idempotency_key="k-race") == 1


async def test_lost_response_times_out_yet_the_effect_is_recorded_and_reconcilable(
    db: str, nc: Client
) -> None:
    await seed_customer(db, CUSTOMER, faults={"execute": ["lose_response"]})
    with pytest.raises(ExternalTimeout):
        await SimActionProvider(nc, IMPATIENT).execute(refund("k-lost"))
    provider = SimActionProvider(nc, PATIENT)
    await until(lambda: action_count(db, idempotency_key="k-lost"), lambda n: n == 1)
    receipt = await provider.lookup("k-lost")
    assert receipt is not None
    assert receipt.amount == Decimal("12.50")
    assert await provider.execute(refund("k-lost")) == receipt
    assert await action_count(db, idempotency_key="k-lost") == 1


async def test_execute_timeout_does_nothing(db: str, nc: Client) -> None:
    await seed_customer(db, CUSTOMER, faults={"execute": ["timeout"]})
    with pytest.raises(ExternalTimeout):
        await SimActionProvider(nc, IMPATIENT).execute(refund("k-silent"))
    await until(lambda: outcomes(db), lambda seen: seen == ["execute:timeout"])
    assert await SimActionProvider(nc, PATIENT).lookup("k-silent") is None
    assert await action_count(db) == 0


async def test_unavailable_execute_does_nothing_and_a_retry_succeeds(db: str, nc: Client) -> None:
    await seed_customer(db, CUSTOMER, faults={"execute": ["unavailable"]})
    provider = SimActionProvider(nc, PATIENT)
    with pytest.raises(ExternalUnavailable):
        await provider.execute(refund("k-down"))
    assert await action_count(db) == 0
    assert await provider.lookup("k-down") is None
    await provider.execute(refund("k-down"))
    assert await action_count(db, idempotency_key="k-down") == 1


async def test_slow_execute_commits_after_the_caller_gave_up(db: str, nc: Client) -> None:
    await seed_customer(db, CUSTOMER, faults={"execute": ["latency:600"]})
    with pytest.raises(ExternalTimeout):
        await SimActionProvider(nc, IMPATIENT).execute(refund("k-slow"))
    provider = SimActionProvider(nc, PATIENT)
    receipt = await until(lambda: provider.lookup("k-slow"), lambda r: r is not None)
    assert receipt is not None
    assert receipt.amount == Decimal("12.50")


async def test_mismatch_stores_and_answers_an_amount_off_by_one(db: str, nc: Client) -> None:
    await seed_customer(db, CUSTOMER, faults={"execute": ["mismatch"]})
    provider = SimActionProvider(nc, PATIENT)
    receipt = await provider.execute(refund("k-off", "40.00"))
    assert receipt.amount == Decimal("41.00")
    assert await provider.lookup("k-off") == receipt
    assert await outcomes(db) == ["execute:mismatch", "lookup:ok"]


async def test_closed_account_refuses_a_new_action(db: str, nc: Client) -> None:
    await seed_customer(db, CUSTOMER, status="closed")
    with pytest.raises(ExternalRejected) as refused:
        await SimActionProvider(nc, PATIENT).execute(refund("k-closed"))
    assert refused.value.error_class == "account_inactive"
    assert await action_count(db) == 0


async def test_a_refused_action_key_stays_refused(db: str, nc: Client) -> None:
    """A caller that missed the refusal (its answer came late) and asks again under the same
    key meets the same refusal, not an effect; a new key is decided afresh."""
    await seed_customer(db, CUSTOMER, faults={"execute": ["refuse"]})
    provider = SimActionProvider(nc, PATIENT)
    for _ in range(2):
        with pytest.raises(ExternalRejected) as refused:
            await provider.execute(refund("k-refused"))
        assert refused.value.error_class == "action_refused"
    assert await action_count(db) == 0
    await provider.execute(refund("k-other"))
    assert await action_count(db) == 1


# --- reversal ---------------------------------------------------------------------------


async def test_reverse_is_idempotent_and_undoes_the_refund(db: str, nc: Client) -> None:
    provider, accounts = SimActionProvider(nc, PATIENT), SimAccountApi(nc, PATIENT)
    receipt = await provider.execute(refund("k-rev"))
    assert (await accounts.inspect(CUSTOMER)).refunds_last_90d == Decimal("12.50")
    first = await provider.reverse("k-rev", receipt.operation_id)
    assert await provider.reverse("k-rev", receipt.operation_id) == first
    assert await reversal_count(db, idempotency_key="k-rev") == 1
    assert (await accounts.inspect(CUSTOMER)).refunds_last_90d == Decimal(0)


async def test_refused_reversal_changes_nothing(db: str, nc: Client) -> None:
    await seed_customer(db, CUSTOMER, faults={"reverse": ["fail"]})
    provider = SimActionProvider(nc, PATIENT)
    receipt = await provider.execute(refund("k-stuck"))
    with pytest.raises(ExternalRejected) as refused:
        await provider.reverse("k-stuck", receipt.operation_id)
    assert refused.value.error_class == "reversal_refused"
    assert await reversal_count(db) == 0
    await provider.reverse("k-stuck", receipt.operation_id)
    assert await reversal_count(db) == 1


async def test_reversing_an_unknown_key_is_rejected(db: str, nc: Client) -> None:
    with pytest.raises(ExternalRejected) as refused:
        await SimActionProvider(nc, PATIENT).reverse("k-never", "op_x")
    assert refused.value.error_class == "action_not_found"
