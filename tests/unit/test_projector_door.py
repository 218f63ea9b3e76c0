"""The projector's door: who sent a message (the subject it arrived on, which the broker lets
only that identity publish on) decides what it may say. Refusals are audited with their reason
when they address a workflow of the sender's tenant, and dead-lettered otherwise; none of them
changes a workflow or spends an event id."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from interlock.contracts.clients import ClientPolicy
from interlock.contracts.envelope import Actor, Envelope
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.ids import result_event_id, timer_event_id
from interlock.contracts.subjects import Inbound
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import (
    accepted,
    checkpoint,
    to_awaiting_approval,
    to_gathering_evidence,
)
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


@pytest.fixture
def store() -> InMemoryWorkflowStore:
    return InMemoryWorkflowStore(clock=lambda: NOW)


@pytest.fixture
def projector(store: InMemoryWorkflowStore) -> Projector:
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


async def test_a_signal_sent_on_a_result_subject_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_awaiting_approval(projector, store, "wf-1")
    approval = envelope("APPROVED", workflow_id="wf-1")

    await assert_refused(
        projector, store, approval, Inbound("result", "support", "execute_action"), "kind_mismatch"
    )


async def test_a_timer_firing_sent_on_a_request_subject_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_awaiting_approval(projector, store, "wf-1")
    firing = await approval_expiry(store)

    await assert_refused(projector, store, firing, UPSTREAM, "kind_mismatch")


async def test_an_event_of_another_type_than_its_subject_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_awaiting_approval(projector, store, "wf-1")
    approval = envelope("APPROVED", workflow_id="wf-1")

    await assert_refused(
        projector, store, approval, Inbound("signal", "request", "approvals"), "subject_mismatch"
    )


# --- clients: types, tenants, roles ----------------------------------------------------------


@pytest.mark.parametrize(
    ("client", "role", "reason"),
    [
        ("approvals", "support_supervisor", "client_not_allowed_role"),
        ("upstream", "support_approver", "client_not_allowed_kind"),
    ],
)
async def test_a_signal_its_client_may_not_send_is_refused_and_audited(
    projector: Projector, store: InMemoryWorkflowStore, client: str, role: str, reason: str
) -> None:
    await to_awaiting_approval(projector, store, "wf-1")
    approval = envelope("APPROVED", workflow_id="wf-1", role=role)

    await assert_refused(projector, store, approval, Inbound("signal", "support", client), reason)


@pytest.mark.parametrize(
    ("client", "reason"),
    [
        ("globex-desk", "client_not_allowed_tenant"),
        ("billing-only", "client_not_allowed_type"),
        ("mallory", "unknown_client"),
    ],
)
async def test_a_signal_of_a_client_without_standing_is_dead_lettered_not_audited(
    projector: Projector, store: InMemoryWorkflowStore, client: str, reason: str
) -> None:
    """A client that may not speak for the tenant (or type) at all writes nothing into that
    tenant's audit: its refusal is dead-lettered, naming it."""
    await to_awaiting_approval(projector, store, "wf-1")
    audit_before = store.audit("wf-1")
    approval = envelope("APPROVED", workflow_id="wf-1", role="support_approver")

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(approval, inbound=Inbound("signal", "support", client))

    assert (refused.value.reason, client in refused.value.detail) == (reason, True)
    assert store.audit("wf-1") == audit_before


async def test_a_request_its_client_may_not_send_is_dead_lettered_and_creates_nothing(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    request = envelope("START", workflow_id="wf-1", tenant_id="acme")

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(request, inbound=Inbound("request", "support", "billing-only"))

    assert refused.value.reason == "client_not_allowed_type"
    assert (store.audit(), store.outbox()) == ([], [])


async def test_a_client_admitted_for_the_tenant_type_and_role_is_decided(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await accepted(
        projector.handle(
            envelope("START", workflow_id="wf-1", tenant_id="globex"), inbound=UPSTREAM
        )
    )

    cancel = envelope("CANCEL_REQUESTED", workflow_id="wf-1", tenant_id="globex")
    outcome = await projector.handle(
        cancel.model_copy(update={"actor": Actor(id="ann", role="support_approver")}),
        inbound=Inbound("signal", "support", "globex-desk"),
    )

    assert (outcome.accepted, outcome.to_state) == (True, "CANCELLED")


# --- results: the stage that owns the event, its own open job, the derived id ---------------


async def test_a_result_its_stage_does_not_emit_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    forged = stage_result("wf-1", await open_jobs(store), "POLICY_RETRIEVED")

    await assert_refused(
        projector,
        store,
        forged,
        Inbound("result", "support", "execute_action"),
        "event_not_emitted_by_stage",
    )


async def test_a_result_answering_another_stages_job_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    jobs = await open_jobs(store)
    policy_job = next(j for j, branch in jobs.items() if branch == "policy")
    # A generic result any stage may send, for the job of the policy branch, from the account
    # stage.
    forged = stage_result("wf-1", {policy_job: "policy"}, "RETRYABLE_ERROR")

    await assert_refused(
        projector,
        store,
        forged,
        Inbound("result", "support", "inspect_account"),
        "job_of_another_stage",
    )


async def test_a_result_whose_id_is_not_derived_from_its_job_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    real = stage_result("wf-1", await open_jobs(store), "POLICY_RETRIEVED")
    forged = real.model_copy(update={"event_id": "result:made-up"})

    await assert_refused(
        projector, store, forged, Inbound("result", "support", "retrieve_policy"), "bad_result_id"
    )
    outcome = await projector.handle(real, inbound=Inbound("result", "support", "retrieve_policy"))
    assert outcome.accepted, outcome


async def test_the_owning_stages_result_for_its_own_job_is_accepted(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    real = stage_result("wf-1", await open_jobs(store), "ACCOUNT_INSPECTED")

    outcome = await projector.handle(real, inbound=Inbound("result", "support", "inspect_account"))

    assert outcome.accepted, outcome


# --- reserved event ids ----------------------------------------------------------------------


async def test_a_signal_in_the_result_namespace_is_refused_and_the_result_still_counts(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    jobs = await open_jobs(store)
    policy_job = next(j for j, branch in jobs.items() if branch == "policy")
    squatter = envelope(
        "CANCEL_REQUESTED", workflow_id="wf-1", event_id=result_event_id(policy_job)
    )

    await assert_refused(projector, store, squatter, APPROVALS, "reserved_event_id")

    real = stage_result("wf-1", jobs, "POLICY_RETRIEVED")
    outcome = await projector.handle(real, inbound=Inbound("result", "support", "retrieve_policy"))
    assert outcome.accepted, outcome


async def test_a_request_in_the_timer_namespace_is_dead_lettered(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    request = envelope("START", workflow_id="wf-9", event_id=timer_event_id("t-1"))

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(request, inbound=UPSTREAM)

    assert refused.value.reason == "reserved_event_id"
    assert store.audit() == []


# --- timer firings ---------------------------------------------------------------------------


async def test_a_premature_timer_firing_is_dead_lettered_not_held_and_not_audited(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_awaiting_approval(projector, store, "wf-1")
    timer = (await checkpoint(store, "wf-1")).execution.timers["approval"]
    early = await approval_expiry(store)
    audit_before = store.audit("wf-1")

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(early, inbound=Inbound("timer", "support", None))

    assert refused.value.reason == "timer_not_due"
    assert store.audit("wf-1") == audit_before
    late = Projector(
        store,
        registry=REGISTRY,
        clock=lambda: timer.fire_at + timedelta(seconds=1),
        clients=CLIENTS,
    )
    outcome = await late.handle(early, inbound=Inbound("timer", "support", None))
    assert (outcome.accepted, outcome.to_state) == (True, "MANUAL_REVIEW")


async def test_a_timer_firing_whose_id_is_not_derived_from_its_timer_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_awaiting_approval(projector, store, "wf-1")
    forged = (await approval_expiry(store)).model_copy(update={"event_id": "timer:made-up"})

    await assert_refused(
        projector, store, forged, Inbound("timer", "support", None), "bad_timer_id"
    )
