"""The PostgreSQL workflow store keeps the store contract (the same suite the in-memory store
passes), read back from its tables."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import asyncpg
import pytest

from interlock.projector.store.postgres import PostgresWorkflowStore, json_codecs, open_store
from interlock.projector.store.records import (
    AuditRecord,
    OutboxRecord,
    ProcessedEvent,
    TimerRecord,
)
from tests.support.store_contract import CutOff, StoreContract

AUDIT = """
SELECT tenant_id, workflow_id, workflow_type, event_id, event_type, from_state, to_state,
       accepted, reason, detail, actor_id, actor_role, state_version, definition_version,
       causation_id, correlation_id, trace_id, guard_results, occurred_at
FROM audit WHERE workflow_id = $1 AND tenant_id = $2 ORDER BY id
"""
TIMERS = """
SELECT id, workflow_id, workflow_type, tenant_id, kind, event_type, fire_at, branch, status,
       armed_version, headers
FROM timers WHERE workflow_id = $1 AND tenant_id = $2 ORDER BY id
"""


class TableRecords:
    def __init__(self, db: asyncpg.Connection) -> None:
        self._db = db

    async def audit(self, workflow_id: str, tenant_id: str = "acme") -> list[AuditRecord]:
        found = await self._db.fetch(AUDIT, workflow_id, tenant_id)
        return [
            AuditRecord(**{**r, "guard_results": tuple(json.loads(r["guard_results"]))})
            for r in found
        ]

    async def processed(self, workflow_id: str, tenant_id: str = "acme") -> set[ProcessedEvent]:
        found = await self._db.fetch(
            "SELECT tenant_id, workflow_id, event_id FROM processed_events "
            "WHERE workflow_id = $1 AND tenant_id = $2",
            workflow_id,
            tenant_id,
        )
        return {ProcessedEvent(**r) for r in found}

    async def outbox(self, workflow_id: str, tenant_id: str = "acme") -> list[OutboxRecord]:
        found = await self._db.fetch(
            "SELECT subject, headers, body, tenant_id, workflow_id FROM outbox "
            "WHERE workflow_id = $1 AND tenant_id = $2 ORDER BY txid, id",
            workflow_id,
            tenant_id,
        )
        return [OutboxRecord(**{**r, "headers": json.loads(r["headers"])}) for r in found]

    async def timers(self, workflow_id: str, tenant_id: str = "acme") -> list[TimerRecord]:
        found = await self._db.fetch(TIMERS, workflow_id, tenant_id)
        return [TimerRecord(**{**r, "headers": json.loads(r["headers"])}) for r in found]

    async def replays(self, workflow_id: str, tenant_id: str = "acme") -> dict[str, int]:
        found = await self._db.fetchval(
            "SELECT replays FROM workflows WHERE id = $1 AND tenant_id = $2",
            workflow_id,
            tenant_id,
        )
        return dict(json.loads(found)) if found else {}


class TestPostgresStore(StoreContract):
    @pytest.fixture
    async def store(self, database_url: str) -> AsyncIterator[PostgresWorkflowStore]:
        opened = await open_store(database_url, size=4)
        yield opened
        await opened.close()

    @pytest.fixture
    def records(self, db: asyncpg.Connection) -> TableRecords:
        return TableRecords(db)

    @pytest.fixture
    def cut_off(self, db: asyncpg.Connection, stack_urls: tuple[str, str]) -> CutOff:
        async def unreachable() -> None:
            """Refuse new connections to the test's database and end the open ones."""
            name = await db.fetchval("SELECT current_database()")
            server = await asyncpg.connect(stack_urls[1])
            try:
                await server.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
                await server.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                    name,
                )
            finally:
                await server.close()

        return unreachable


@pytest.mark.parametrize(
    "value",
    [
        {"amount": 2**70, "fraction": 0.1, "name": "Zoë", "nested": [1, None, True, {"k": "v"}]},
        {"n": -(2**63)},
        [],
    ],
)
async def test_json_columns_round_trip_exactly(database_url: str, value: object) -> None:
    """The store's JSON codecs: orjson writes what it can, the standard encoder the rest
    (integers beyond 64 bits), and reading never turns an integer into a float."""
    conn = await asyncpg.connect(database_url)
    try:
        await json_codecs(conn)
        assert await conn.fetchval("SELECT $1::jsonb", value) == value
    finally:
        await conn.close()


async def test_a_warm_store_opens_every_connection_up_front(database_url: str) -> None:
    """The projector's store is warm: a burst after a quiet spell finds its connections open
    rather than waiting, every decision in flight together, for new ones. A cold store (the
    commands' one-off stores) opens one and grows on demand."""
    warm = await open_store(database_url, size=5, warm=True)
    cold = await open_store(database_url, size=5)
    try:
        assert (warm.pool.get_size(), warm.pool.get_idle_size()) == (5, 5)
        assert cold.pool.get_size() == 1
    finally:
        await warm.close()
        await cold.close()
