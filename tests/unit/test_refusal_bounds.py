"""Refusals land with the sender: a client that may act for the tenant had every refusal audited
on the workflow it named, without bound (2,000 rows of its choosing made the workflow's console
page take seconds). Past its bound per workflow and window, a client's refusals are dead-lettered
`refusals_over_limit` with the original reason and its name, not written into the audit; other
clients and other workflows keep their own bounds."""

from __future__ import annotations

import pytest

from interlock.contracts.envelope import Envelope, utcnow
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.subjects import Inbound
from interlock.projector.refusal_bounds import OVER_LIMIT, RefusalBounds
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import to_awaiting_approval
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY
from tests.unit.test_door_sender_authority import CLIENTS, NOW

APPROVALS = Inbound("signal", "support", "approvals")
BOUND = 5


def _projector(store: InMemoryWorkflowStore) -> Projector:
    bounds = RefusalBounds(per_workflow=BOUND, per_sender=3 * BOUND)
    return Projector(
        store, registry=REGISTRY, clock=lambda: NOW, clients=CLIENTS, refusal_bounds=bounds
    )


def _stale(workflow_id: str, n: int) -> Envelope:
    """An approval of a recommendation version the workflow never had: refused, audited."""
    return envelope(
        "APPROVED",
        workflow_id=workflow_id,
        event_id=f"stale-{workflow_id}-{n}",
        expected_version=999,
        occurred_at=utcnow(),
    )


def _refused(store: InMemoryWorkflowStore, workflow_id: str) -> int:
    return sum(1 for a in store.audit(workflow_id) if not a.accepted)


async def test_a_clients_refusals_past_its_bound_are_dead_lettered_not_audited() -> None:
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = _projector(store)
    await to_awaiting_approval(projector, store, "wf-1")
    for n in range(BOUND):
        assert not (await projector.handle(_stale("wf-1", n), inbound=APPROVALS)).accepted

    with pytest.raises(MalformedMessage) as over:
        await projector.handle(_stale("wf-1", BOUND), inbound=APPROVALS)

    assert over.value.reason == OVER_LIMIT
    assert "stale_version" in over.value.detail
    assert "approvals" in over.value.detail
    assert _refused(store, "wf-1") == BOUND


async def test_another_workflow_keeps_its_own_bound() -> None:
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = _projector(store)
    for workflow_id in ("wf-1", "wf-2"):
        await to_awaiting_approval(projector, store, workflow_id)
    for n in range(BOUND):
        await projector.handle(_stale("wf-1", n), inbound=APPROVALS)

    await projector.handle(_stale("wf-2", 0), inbound=APPROVALS)

    assert _refused(store, "wf-2") == 1


def test_another_sender_keeps_its_own_bound() -> None:
    bounds = RefusalBounds(per_workflow=1, per_sender=10)
    assert bounds.admit("signal:approvals", "acme", "wf-1") is None
    assert bounds.admit("signal:approvals", "acme", "wf-1") is not None
    assert bounds.admit("signal:desk", "acme", "wf-1") is None


def test_a_sender_is_bounded_over_all_workflows() -> None:
    bounds = RefusalBounds(per_workflow=5, per_sender=2)
    assert bounds.admit("a", "t", "wf-1") is None
    assert bounds.admit("a", "t", "wf-2") is None
    assert bounds.admit("a", "t", "wf-3") is not None


def test_the_count_starts_afresh_each_window() -> None:
    now = [0.0]
    bounds = RefusalBounds(per_workflow=1, per_sender=10, window=60.0, clock=lambda: now[0])
    assert bounds.admit("signal:approvals", "acme", "wf-1") is None
    assert bounds.admit("signal:approvals", "acme", "wf-1") is not None
    now[0] = 61.0
    assert bounds.admit("signal:approvals", "acme", "wf-1") is None


def test_the_keys_kept_are_bounded() -> None:
    bounds = RefusalBounds(per_workflow=5, per_sender=100, max_keys=3)
    assert bounds.admit("a", "t", "wf-1") is None
    assert bounds.admit("a", "t", "wf-2") is None
    assert bounds.admit("a", "t", "wf-1") is None  # no new key
    assert bounds.admit("a", "t", "wf-3") is not None
