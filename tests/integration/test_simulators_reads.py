"""The simulated reads and notifications through their adapters, against real NATS and
PostgreSQL: account inspection, current and versioned policies, planned outages for one
customer, and deduplicated or undeliverable notifications.

Each test runs the simulator as a task, talks to it only through the adapters (as stage
services do) and checks the ledgers through the admin functions, never through the
simulator it is checking.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from nats.aio.client import Client

from interlock.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable
from interlock.simulators import notification_count, publish_policy, seed_customer
from interlock.workflows.support.sim import SimAccountApi, SimNotifier, SimPolicyStore, acting_for
from tests.support.simulation import (
    CUSTOMER,
    IMPATIENT,
    PATIENT,
    outcomes,
    simulated_database,
)

pytestmark = pytest.mark.timeout(60)

# The `db` these tests take: the database URL, with a simulator serving it for the test.
db = simulated_database


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


async def test_a_repeat_of_an_undeliverable_notification_is_refused_the_same(
    db: str, nc: Client
) -> None:
    """A caller that missed the refusal (its answer came late) and asks again under the same
    delivery key meets the same refusal, not a delivery; another key is unaffected."""
    await seed_customer(db, CUSTOMER, faults={"notify": ["fail"]})
    notifier = SimNotifier(nc, PATIENT)
    for _ in range(2):
        with pytest.raises(ExternalRejected) as refused:
            await notifier.send("d-x", CUSTOMER, "refund-done", {})
        assert refused.value.error_class == "undeliverable"
    await notifier.send("d-y", CUSTOMER, "refund-done", {})
    assert await notification_count(db, delivery_key="d-x") == 0
    assert await notification_count(db, customer_id=CUSTOMER) == 1
