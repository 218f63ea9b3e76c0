"""Findings of the trust issue, reproduced through `Projector.handle` on the in-memory store."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from interlock.contracts.ids import result_event_id
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import accepted, answer, checkpoint, to_gathering_evidence
from tests.support.payloads import REQUEST, envelope
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


@pytest.fixture
def store() -> InMemoryWorkflowStore:
    return InMemoryWorkflowStore(clock=lambda: NOW)


def projector(store: InMemoryWorkflowStore) -> Projector:
    return Projector(store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0)


async def test_another_tenants_request_with_the_same_key_creates_its_own_workflow(
    store: InMemoryWorkflowStore,
) -> None:
    p = projector(store)
    await accepted(p.handle(envelope("START", workflow_id="order-7")))
    victim = store.audit("order-7")
    theirs = envelope("START", workflow_id="order-7", payload={**REQUEST, "amount": "1.00"})

    outcome = await p.handle(theirs.model_copy(update={"tenant_id": "globex"}))

    assert (outcome.accepted, outcome.to_state) == (True, "CLASSIFYING")
    assert [a for a in store.audit("order-7") if a.event_id != theirs.event_id] == victim


async def test_a_refused_event_does_not_reserve_its_event_id(
    store: InMemoryWorkflowStore,
) -> None:
    p = projector(store)
    await to_gathering_evidence(p, store, "wf-1")
    jobs = (await checkpoint(store, "wf-1")).execution.open_jobs
    squatted = result_event_id(next(iter(jobs)))
    early = envelope("CANCEL_REQUESTED", workflow_id="wf-1", event_id=squatted, expected_version=99)
    refused = await p.handle(early)
    assert not refused.accepted

    outcome = await answer(p, store, "wf-1", "POLICY_RETRIEVED")

    assert outcome.accepted, outcome
