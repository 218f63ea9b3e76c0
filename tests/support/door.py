"""The projector's door under test: the clients' standing, a projector with them over an
in-memory store, and what a refused message must leave behind."""

from __future__ import annotations

from datetime import UTC, datetime

from interlock.contracts.clients import ClientPolicy
from interlock.contracts.envelope import Envelope
from interlock.contracts.subjects import Inbound
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import checkpoint
from tests.support.payloads import envelope, result_event
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
EVERY = frozenset({"*"})
CLIENTS = {
    "upstream": ClientPolicy(publish=frozenset({"request"}), types=EVERY, tenants=EVERY),
    "approvals": ClientPolicy(
        publish=frozenset({"signal"}),
        types=EVERY,
        tenants=EVERY,
        roles=frozenset({"support_approver", "operator"}),
    ),
    "globex-desk": ClientPolicy(
        publish=frozenset({"signal"}),
        types=frozenset({"support"}),
        tenants=frozenset({"globex"}),
        roles=frozenset({"support_approver"}),
    ),
    "billing-only": ClientPolicy(
        publish=frozenset({"request", "signal"}),
        types=frozenset({"invoice"}),
        tenants=EVERY,
        roles=frozenset({"support_approver"}),
    ),
}
UPSTREAM = Inbound("request", "support", "upstream")
APPROVALS = Inbound("signal", "support", "approvals")


def new_store() -> InMemoryWorkflowStore:
    return InMemoryWorkflowStore(clock=lambda: NOW)


def new_projector(store: InMemoryWorkflowStore) -> Projector:
    """A projector deciding for `CLIENTS` at `NOW`."""
    return Projector(store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0, clients=CLIENTS)


def refusals(store: InMemoryWorkflowStore, event: Envelope) -> list[str | None]:
    return [a.reason for a in store.audit("wf-1") if a.event_id == event.event_id]


async def assert_refused(
    projector: Projector,
    store: InMemoryWorkflowStore,
    event: Envelope,
    inbound: Inbound,
    reason: str,
) -> None:
    """`event` is refused for `reason`, audited once, and the workflow does not move."""
    before = await checkpoint(store, "wf-1")

    outcome = await projector.handle(event, inbound=inbound)

    assert (outcome.accepted, outcome.reason) == (False, reason)
    assert refusals(store, event) == [reason]
    assert await checkpoint(store, "wf-1") == before


def stage_result(workflow: str, jobs: dict[str, str | None], event_type: str) -> Envelope:
    return result_event(workflow, jobs, event_type)


async def open_jobs(store: InMemoryWorkflowStore) -> dict[str, str | None]:
    return {
        j: job.branch for j, job in (await checkpoint(store, "wf-1")).execution.open_jobs.items()
    }


async def approval_expiry(store: InMemoryWorkflowStore) -> Envelope:
    """The firing of the workflow's approval timer, with the event id derived from it."""
    timer = (await checkpoint(store, "wf-1")).execution.timers["approval"]
    return envelope(
        "APPROVAL_EXPIRED",
        workflow_id="wf-1",
        payload={"timer_id": timer.id, "fire_at": timer.fire_at.isoformat()},
    )


# --- the subject decides the kind and the type -----------------------------------------------
