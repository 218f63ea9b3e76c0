"""The internal-effects simulator behind `SimEffectProvider`, against real NATS and
PostgreSQL: one effect per key however often it is asked, its authority recorded beside it,
and reconcile-first execution finding it again."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import nats
import pytest
from nats.aio.client import Client

from interlock.services.adapters.sim import SimEffectProvider
from interlock.services.effects import execute_once
from interlock.services.errors import ExternalRejected
from interlock.services.ports import EffectRequest
from interlock.simulators import effect_rows
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
