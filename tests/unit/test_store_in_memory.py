"""The in-memory workflow store keeps the store contract (the same suite PostgreSQL passes)."""

from __future__ import annotations

import pytest

from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.projector.store.records import (
    AuditRecord,
    OutboxRecord,
    ProcessedEvent,
    TimerRecord,
)
from tests.support.store_contract import CutOff, StoreContract


class MemoryRecords:
    def __init__(self, store: InMemoryWorkflowStore) -> None:
        self._store = store

    async def audit(self, workflow_id: str, tenant_id: str = "acme") -> list[AuditRecord]:
        return self._store.audit(workflow_id, tenant_id)

    async def processed(self, workflow_id: str, tenant_id: str = "acme") -> set[ProcessedEvent]:
        return set(self._store.processed(workflow_id, tenant_id))

    async def outbox(self, workflow_id: str, tenant_id: str = "acme") -> list[OutboxRecord]:
        return self._store.outbox(workflow_id, tenant_id)

    async def timers(self, workflow_id: str, tenant_id: str = "acme") -> list[TimerRecord]:
        return self._store.timers(workflow_id, tenant_id)

    async def replays(self, workflow_id: str, tenant_id: str = "acme") -> dict[str, int]:
        return self._store.replays(workflow_id, tenant_id)


class TestInMemoryStore(StoreContract):
    @pytest.fixture
    def store(self) -> InMemoryWorkflowStore:
        return InMemoryWorkflowStore()

    @pytest.fixture
    def records(self, store: InMemoryWorkflowStore) -> MemoryRecords:
        return MemoryRecords(store)

    @pytest.fixture
    def cut_off(self, store: InMemoryWorkflowStore) -> CutOff:
        async def unavailable() -> None:
            store.available = False

        return unavailable
