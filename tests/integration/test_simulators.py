"""The simulated external systems and their adapters, against real NATS and PostgreSQL.

Each test runs the simulator as a task, talks to it only through the adapters (as stage
services do) and checks the ledgers through the admin functions, never through the
simulator it is checking.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any, TypeVar

import pytest
from nats.aio.client import Client

from interlock.sim import (
    action_count,
    calls,
    notification_count,
    publish_policy,
    reversal_count,
    run_simulator,
    seed_customer,
)
from interlock.sim.db import connection
from services.adapters.sim import (
    ACTION_EXECUTE,
    SimAccountApi,
    SimActionProvider,
    SimNotifier,
    SimPolicyStore,
    acting_for,
)
from services.ports import (
    ActionRequest,
    ExternalRejected,
    ExternalTimeout,
    ExternalUnavailable,
)

pytestmark = pytest.mark.timeout(60)

T = TypeVar("T")
CUSTOMER = "cust-1"
PATIENT = 5.0
"""Adapter timeout (s) for calls expected to succeed: generous, so a slow machine passes."""
IMPATIENT = 0.3
"""Adapter timeout (s) for calls expected to time out: short, so tests stay fast."""


# --- helpers and fixtures ---------------------------------------------------------------


@asynccontextmanager
async def simulator(database_url: str, nats_url: str, **options: Any) -> AsyncIterator[None]:
    """Run one simulator instance for the duration of the block; fail if it dies."""
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(run_simulator(database_url, nats_url, stop, ready=ready, **options))
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait({task, waiter}, timeout=20, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if task.done():
        task.result()  # re-raise its start-up failure
    assert ready.is_set(), "the simulator did not become ready"
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)


async def eventually(
    probe: Callable[[], Awaitable[T]], accept: Callable[[T], bool], within: float = 5.0
) -> T:
    """Poll `probe` until `accept` holds (returning that value) or fail at the deadline."""
    deadline = time.monotonic() + within
    while True:
        value = await probe()
        if accept(value):
            return value
        assert time.monotonic() < deadline, f"still {value!r} after {within}s"
        await asyncio.sleep(0.02)


def refund(key: str, amount: str = "12.50", customer_id: str = CUSTOMER) -> ActionRequest:
    return ActionRequest(
        idempotency_key=key,
        action_type="refund",
        customer_id=customer_id,
        amount=Decimal(amount),
        currency="EUR",
    )


async def outcomes(database_url: str, customer_id: str = CUSTOMER) -> list[str]:
    return [f"{c['operation']}:{c['outcome']}" for c in await calls(database_url, customer_id)]


@pytest.fixture
async def db(database_url: str, nats_url: str) -> AsyncIterator[str]:
    """The database URL, with a simulator serving it for the test."""
    async with simulator(database_url, nats_url):
        yield database_url


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
    await eventually(lambda: action_count(db, idempotency_key="k-lost"), lambda n: n == 1)
    receipt = await provider.lookup("k-lost")
    assert receipt is not None
    assert receipt.amount == Decimal("12.50")
    assert await provider.execute(refund("k-lost")) == receipt
    assert await action_count(db, idempotency_key="k-lost") == 1


async def test_execute_timeout_does_nothing(db: str, nc: Client) -> None:
    await seed_customer(db, CUSTOMER, faults={"execute": ["timeout"]})
    with pytest.raises(ExternalTimeout):
        await SimActionProvider(nc, IMPATIENT).execute(refund("k-silent"))
    await eventually(lambda: outcomes(db), lambda seen: seen == ["execute:timeout"])
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
    receipt = await eventually(lambda: provider.lookup("k-slow"), lambda r: r is not None)
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


# --- accounts and policies --------------------------------------------------------------


async def test_inspect_timeout_then_ok(db: str, nc: Client) -> None:
    await seed_customer(db, CUSTOMER, faults={"inspect": ["timeout"]})
    with pytest.raises(ExternalTimeout):
        await SimAccountApi(nc, IMPATIENT).inspect(CUSTOMER)
    account = await SimAccountApi(nc, PATIENT).inspect(CUSTOMER)
    assert (account.customer_id, account.status, account.currency) == (CUSTOMER, "active", "EUR")
    assert await outcomes(db) == ["inspect:timeout", "inspect:ok"]


async def test_unknown_customer_is_provisioned_but_missing_is_not_found(
    db: str, nc: Client
) -> None:
    accounts = SimAccountApi(nc, PATIENT)
    assert (await accounts.inspect("bench-42")).status == "active"
    with pytest.raises(ExternalRejected) as refused:
        await accounts.inspect("missing-7")
    assert refused.value.error_class == "account_not_found"


async def test_policy_current_is_the_latest_and_versions_stay_readable(db: str, nc: Client) -> None:
    policies = SimPolicyStore(nc, PATIENT)
    current = await policies.current("billing")
    assert (current.policy_id, current.policy_version, current.max_amount) == (
        "refunds",
        2,
        Decimal("250.00"),
    )
    assert (await policies.version("refunds", 1)).max_amount == Decimal("100.00")
    assert await publish_policy(db, "refunds", "billing", Decimal("80.00"), ["refund"]) == 3
    assert (await policies.current("billing")).policy_version == 3
    assert (await policies.version("refunds", 2)).max_amount == Decimal("250.00")
    with pytest.raises(ExternalRejected) as refused:
        await policies.current("no-such-category")
    assert refused.value.error_class == "policy_not_found"


async def test_policy_outage_applies_to_the_customer_it_was_planned_for(
    db: str, nc: Client
) -> None:
    await seed_customer(db, CUSTOMER, faults={"policy": ["unavailable"]})
    policies = SimPolicyStore(nc, PATIENT)
    assert (await policies.current("access")).policy_id == "access-credits"
    with acting_for(CUSTOMER), pytest.raises(ExternalUnavailable):
        await policies.current("access")
    with acting_for(CUSTOMER):
        assert (await policies.current("access")).policy_id == "access-credits"
    assert await outcomes(db) == ["policy:unavailable", "policy:ok"]


# --- notifications ----------------------------------------------------------------------


async def test_notify_deduplicates_by_delivery_key(db: str, nc: Client) -> None:
    notifier = SimNotifier(nc, PATIENT)
    first = await notifier.send("d-1", CUSTOMER, "refund-done", {"amount": "12.50"})
    assert await notifier.send("d-1", CUSTOMER, "refund-done", {"amount": "12.50"}) == first
    await notifier.send("d-2", CUSTOMER, "refund-done", {})
    assert await notification_count(db, delivery_key="d-1") == 1
    assert await notification_count(db, customer_id=CUSTOMER) == 2


async def test_undeliverable_notification_is_rejected_and_not_recorded(db: str, nc: Client) -> None:
    await seed_customer(db, CUSTOMER, faults={"notify": ["fail"]})
    with pytest.raises(ExternalRejected) as refused:
        await SimNotifier(nc, PATIENT).send("d-x", CUSTOMER, "refund-done", {})
    assert refused.value.error_class == "undeliverable"
    assert await notification_count(db) == 0


# --- transport and process --------------------------------------------------------------


async def test_without_a_simulator_calls_are_unavailable(nc: Client) -> None:
    with pytest.raises(ExternalUnavailable):
        await SimAccountApi(nc, PATIENT).inspect(CUSTOMER)


async def test_malformed_request_is_rejected_as_bad_request(db: str, nc: Client) -> None:
    for payload in (b"not json", b"[1]", json.dumps({"idempotency_key": "k"}).encode()):
        reply = json.loads((await nc.request(ACTION_EXECUTE, payload, timeout=PATIENT)).data)
        assert reply["ok"] is False
        assert (reply["error"], reply["error_class"]) == ("rejected", "bad_request")
    assert await action_count(db) == 0


async def test_global_latency_delays_every_call(
    database_url: str, nats_url: str, nc: Client
) -> None:
    async with simulator(database_url, nats_url, latency_ms=800):
        with pytest.raises(ExternalTimeout):
            await SimAccountApi(nc, IMPATIENT).inspect(CUSTOMER)
        assert (await SimAccountApi(nc, PATIENT).inspect(CUSTOMER)).status == "active"


async def test_two_instances_in_one_queue_group_apply_each_request_once(
    database_url: str, nats_url: str, nc: Client
) -> None:
    async with simulator(database_url, nats_url), simulator(database_url, nats_url):
        provider = SimActionProvider(nc, PATIENT)
        receipts = await asyncio.gather(*(provider.execute(refund("k-two")) for _ in range(20)))
    assert len({r.operation_id for r in receipts}) == 1
    assert await action_count(database_url) == 1
    # Each request was handled by exactly one instance: twenty calls logged, not forty.
    assert len(await calls(database_url, CUSTOMER)) == 20


async def test_stopping_answers_the_calls_in_flight(
    database_url: str, nats_url: str, nc: Client
) -> None:
    await seed_customer(database_url, CUSTOMER, faults={"execute": ["latency:400"]})
    async with simulator(database_url, nats_url):
        pending = asyncio.create_task(SimActionProvider(nc, PATIENT).execute(refund("k-drain")))
        # The sleeping call holds its transaction open; stop only once it is in flight.
        await eventually(lambda: _open_transactions(database_url), lambda n: n >= 1)
    assert (await pending).amount == Decimal("12.50")
    assert await action_count(database_url, idempotency_key="k-drain") == 1


async def test_invalid_fault_plans_are_refused_when_seeding(database_url: str) -> None:
    for faults in ({"inspect": ["lose_response"]}, {"bogus": ["ok"]}, {"execute": ["latency:x"]}):
        with pytest.raises(ValueError, match="use"):
            await seed_customer(database_url, CUSTOMER, faults=faults)
    assert await calls(database_url, CUSTOMER) == []


async def _open_transactions(database_url: str) -> int:
    async with connection(database_url) as conn:
        return int(
            await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND state = 'idle in transaction'"
            )
        )
