"""Hostile input, round two, at the projector's door: a message carries one sender's authority
end to end (the gateway's senders are checked one by one, never as a union), a refusal lands
with its sender rather than in another tenant's audit, and a timestamp outside the skew window
is dead-lettered at once instead of failing the commit until its deliveries run out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from interlock.contracts.clients import ClientPolicy, SenderGrant, relayed_event_id
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.subjects import Inbound
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import checkpoint, to_awaiting_approval
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
EVERY = frozenset({"*"})
TICKETS = SenderGrant(
    tenants=frozenset({"globex"}),
    roles=frozenset({"support_approver"}),
    actors=frozenset({"alice"}),
)
DESK = SenderGrant(
    tenants=frozenset({"acme"}),
    roles=frozenset({"support_approver"}),
    actors=frozenset({"alice"}),
)
OPS = SenderGrant(tenants=EVERY, roles=frozenset({"support_supervisor", "operator"}), actors=EVERY)
CLIENTS = {
    "upstream": ClientPolicy(publish=frozenset({"request"}), types=EVERY, tenants=EVERY),
    "approvals": ClientPolicy(
        publish=frozenset({"signal"}),
        types=EVERY,
        tenants=EVERY,
        roles=frozenset({"support_approver"}),
    ),
    # What the gateway's senders together may: the union the projector must not check against.
    "gateway": ClientPolicy(
        publish=frozenset({"signal"}),
        types=EVERY,
        tenants=EVERY,
        roles=frozenset({"support_approver", "support_supervisor", "operator"}),
        senders={"tickets": TICKETS, "desk": DESK, "ops": OPS},
    ),
    "globex-desk": ClientPolicy(
        publish=frozenset({"signal"}),
        types=frozenset({"support"}),
        tenants=frozenset({"globex"}),
        roles=frozenset({"support_approver"}),
    ),
}
GATEWAY = Inbound("signal", "support", "gateway")
UPSTREAM = Inbound("request", "support", "upstream")


@pytest.fixture
def store() -> InMemoryWorkflowStore:
    return InMemoryWorkflowStore(clock=lambda: NOW)


@pytest.fixture
def projector(store: InMemoryWorkflowStore) -> Projector:
    return Projector(store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0, clients=CLIENTS)


def relayed(sender: str, tenant: str, actor: str, role: str) -> Envelope:
    """An approval as the gateway publishes it for `sender` (its event id names the sender)."""
    approval = envelope("APPROVED", workflow_id="wf-1", tenant_id=tenant, occurred_at=utcnow())
    return approval.model_copy(
        update={
            "event_id": relayed_event_id(sender, "msg_1"),
            "actor": Actor(id=actor, role=role),
        }
    )


async def awaiting(projector: Projector, store: InMemoryWorkflowStore) -> None:
    """wf-1 of tenant acme waits for an approval."""
    await to_awaiting_approval(projector, store, "wf-1")


# --- 1. one sender's authority, never the union ----------------------------------------------


async def test_a_redriven_webhook_of_one_sender_is_refused_for_another_tenant_naming_it(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    """The attack of the issue: `tickets` (globex, alice, support_approver) made the gateway
    carry an approval for an acme workflow as mallory/support_supervisor; the gateway's union
    policy admits all of that, the sender's own grant none of it."""
    await awaiting(projector, store)
    before, audit_before = await checkpoint(store, "wf-1"), store.audit("wf-1")

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(
            relayed("tickets", "acme", "mallory", "support_supervisor"), inbound=GATEWAY
        )

    assert refused.value.reason == "client_not_allowed_tenant"
    assert "'tickets'" in refused.value.detail
    assert await checkpoint(store, "wf-1") == before
    assert store.audit("wf-1") == audit_before


@pytest.mark.parametrize(
    ("actor", "role"), [("mallory", "support_approver"), ("alice", "support_supervisor")]
)
async def test_a_relayed_signal_is_checked_against_its_own_senders_actors_and_roles(
    projector: Projector, store: InMemoryWorkflowStore, actor: str, role: str
) -> None:
    await awaiting(projector, store)

    outcome = await projector.handle(relayed("desk", "acme", actor, role), inbound=GATEWAY)

    assert (outcome.accepted, outcome.reason) == (False, "client_not_allowed_role")
    refusal = [a for a in store.audit("wf-1") if a.event_id == relayed_event_id("desk", "msg_1")]
    assert [a.detail for a in refusal] == ["gateway sender 'desk' may not sign as that actor"]


async def test_a_relayed_signal_naming_no_configured_sender_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await awaiting(projector, store)
    forged = relayed("desk", "acme", "alice", "support_approver").model_copy(
        update={"event_id": "not-a-gateway-id"}
    )

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(forged, inbound=GATEWAY)

    assert refused.value.reason == "unknown_client"


async def test_a_relayed_signal_within_its_senders_grant_is_decided(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await awaiting(projector, store)
    approval = relayed("desk", "acme", "alice", "support_approver")

    outcome = await projector.handle(approval, inbound=GATEWAY)

    assert (outcome.accepted, outcome.to_state) == (True, "EXECUTING_ACTION")


# --- 3. a refusal lands with its sender, not in another tenant's audit -----------------------


async def test_a_client_of_another_tenant_writes_nothing_into_this_tenants_audit(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await awaiting(projector, store)
    audit_before = store.audit("wf-1")
    approval = envelope(
        "APPROVED", workflow_id="wf-1", role="support_approver", occurred_at=utcnow()
    )

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(approval, inbound=Inbound("signal", "support", "globex-desk"))

    assert refused.value.reason == "client_not_allowed_tenant"
    assert "globex-desk" in refused.value.detail
    assert store.audit("wf-1") == audit_before


# --- 2. timestamps outside the skew window ---------------------------------------------------


@pytest.mark.parametrize(
    "occurred_at",
    [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, tzinfo=UTC),
        utcnow() + timedelta(days=2),
    ],
)
async def test_a_timestamp_outside_the_skew_window_is_dead_lettered_at_once(
    projector: Projector, store: InMemoryWorkflowStore, occurred_at: datetime
) -> None:
    await awaiting(projector, store)
    before = await checkpoint(store, "wf-1")
    approval = envelope("APPROVED", workflow_id="wf-1", occurred_at=occurred_at)

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(approval, inbound=Inbound("signal", "support", "approvals"))

    assert refused.value.reason == "bad_timestamp"
    assert await checkpoint(store, "wf-1") == before


async def test_a_request_with_an_absurd_timestamp_creates_nothing(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    request = envelope("START", workflow_id="wf-9", occurred_at=datetime(1, 1, 1, tzinfo=UTC))

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(request, inbound=UPSTREAM)

    assert refused.value.reason == "bad_timestamp"
    assert (store.audit(), store.outbox()) == ([], [])


# --- dead letters audited where the sender has standing --------------------------------------


async def test_a_dead_letter_of_a_sender_with_standing_is_audited_with_its_reason(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await awaiting(projector, store)
    approval = envelope("APPROVED", workflow_id="wf-1", occurred_at=datetime(1, 1, 1, tzinfo=UTC))

    audited = await projector.audit_dead_letter(
        approval,
        "bad_timestamp",
        "occurred_at out of range",
        Inbound("signal", "support", "approvals"),
    )

    rows = [a for a in store.audit("wf-1") if a.event_id == approval.event_id]
    assert audited is True
    assert [(a.reason, a.accepted) for a in rows] == [("bad_timestamp", False)]
    assert rows[0].occurred_at == NOW  # recorded at the refusal: year 1 may not be storable


async def test_a_dead_letter_of_a_sender_without_standing_is_not_audited(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await awaiting(projector, store)
    audit_before = store.audit("wf-1")
    approval = envelope("APPROVED", workflow_id="wf-1", occurred_at=utcnow())

    audited = await projector.audit_dead_letter(
        approval, "schema_mismatch", "payload", Inbound("signal", "support", "globex-desk")
    )

    assert audited is False
    assert store.audit("wf-1") == audit_before
