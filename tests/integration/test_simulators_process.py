"""The simulator as a process, against real NATS and PostgreSQL: no simulator means
unavailable, malformed requests are refused, global latency, one effect per request across a
queue group, draining the calls in flight on stop, and fault plans checked when seeded.

Tests here run the simulator themselves where they need one, talk to it only through the
adapters (or raw requests) and check the ledgers through the admin functions.
"""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal

import pytest
from nats.aio.client import Client

from interlock.errors import ExternalTimeout, ExternalUnavailable
from interlock.services.adapters.sim import ACTION_EXECUTE
from interlock.simulators import action_count, calls, seed_customer
from interlock.simulators.db import connection
from interlock.workflows.support.sim import SimAccountApi, SimActionProvider
from tests.support.simulation import (
    CUSTOMER,
    IMPATIENT,
    PATIENT,
    refund,
    simulated_database,
    simulator,
)
from tests.support.waiting import until

pytestmark = pytest.mark.timeout(60)

# The `db` these tests take: the database URL, with a simulator serving it for the test.
db = simulated_database


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
        await until(lambda: _open_transactions(database_url), lambda n: n >= 1)
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
