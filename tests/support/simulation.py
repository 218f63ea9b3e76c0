"""A simulator to talk to, and what the simulator tests ask of it: shared by the simulator
integration tests, which reach it only through the adapters (as stage services do) and check
the ledgers through the admin functions.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any

import pytest

from interlock.simulators import calls, run_simulator
from interlock.workflows.support.systems import ActionRequest

CUSTOMER = "cust-1"
PATIENT = 5.0
"""Adapter timeout (s) for calls expected to succeed: generous, so a slow machine passes."""
IMPATIENT = 0.3
"""Adapter timeout (s) for calls expected to time out: short, so tests stay fast."""


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
async def simulated_database(database_url: str, nats_url: str) -> AsyncIterator[str]:
    """The database URL, with a simulator serving it for the test.

    Test modules take it as their `db` (`db = simulated_database`), in place of the
    integration tier's connection of that name.
    """
    async with simulator(database_url, nats_url):
        yield database_url
