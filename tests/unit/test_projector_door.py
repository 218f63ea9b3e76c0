"""The projector's door: who sent a message (the subject it arrived on, which the broker lets
only that identity publish on) decides what it may say. Refusals are audited with their reason
when they address a workflow of the sender's tenant, and dead-lettered otherwise; none of them
changes a workflow or spends an event id."""

from __future__ import annotations

import pytest

from interlock.contracts.envelope import Actor
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.subjects import Inbound
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import accepted, to_awaiting_approval
from tests.support.door import (
    UPSTREAM,
    approval_expiry,
    assert_refused,
    new_projector,
    new_store,
)
from tests.support.payloads import envelope


@pytest.fixture
def store() -> InMemoryWorkflowStore:
    return new_store()


@pytest.fixture
def projector(store: InMemoryWorkflowStore) -> Projector:
    return new_projector(store)


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
