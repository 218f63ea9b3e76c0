"""The gateway signs the sender each message speaks for; the projector verifies the claim, so a
message naming a sender without the gateway's signature is refused, with its reason, and never
written into the workflow's audit (it is dead-lettered with the sender named)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from interlock.contracts import subjects
from interlock.contracts.clients import ClientPolicy, SenderGrant, relayed_event_id
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.errors import MalformedMessage
from interlock.contracts.sender_claims import HEADER_SENDER_CLAIM
from interlock.projector.claims import ClaimVerifier
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.services.gateway.claims import ClaimSigner
from tests.support.direct import checkpoint, to_awaiting_approval
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
EVERY = frozenset({"*"})
APPROVER = frozenset({"support_approver"})
GRANTS = {
    "desk": SenderGrant(tenants=frozenset({"acme"}), roles=APPROVER, actors=EVERY),
    "tickets": SenderGrant(tenants=frozenset({"acme"}), roles=APPROVER, actors=EVERY),
}
CLIENTS = {
    "upstream": ClientPolicy(publish=frozenset({"request"}), types=EVERY, tenants=EVERY),
    "gateway": ClientPolicy(
        publish=frozenset({"signal"}), types=EVERY, tenants=EVERY, roles=APPROVER, senders=GRANTS
    ),
}
SUBJECT = subjects.signal("support", "gateway")
KEY = Ed25519PrivateKey.generate()
SIGNER = ClaimSigner(
    KEY.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
)
PUBLIC = (
    KEY.public_key()
    .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    .decode()
)


@pytest.fixture
def store() -> InMemoryWorkflowStore:
    return InMemoryWorkflowStore(clock=lambda: NOW)


@pytest.fixture
async def projector(store: InMemoryWorkflowStore) -> Projector:
    verifying = Projector(
        store,
        registry=REGISTRY,
        clock=lambda: NOW,
        rand=lambda: 0.0,
        clients=CLIENTS,
        sender_claims=ClaimVerifier(PUBLIC),
    )
    await to_awaiting_approval(verifying, store, "wf-1")
    return verifying


def _approval(sender: str) -> Envelope:
    approval = envelope("APPROVED", workflow_id="wf-1", tenant_id="acme", occurred_at=utcnow())
    return approval.model_copy(
        update={
            "event_id": relayed_event_id(sender, "msg_1"),
            "actor": Actor(id="alice", role="support_approver"),
        }
    )


async def _handled(projector: Projector, event: Envelope, headers: dict[str, str]) -> str:
    body = event.to_bytes()
    outcome = await projector.handle(event, inbound=projector.inbound(SUBJECT, body, headers))
    return str(outcome.to_state)


async def test_a_message_signed_for_its_sender_is_decided(projector: Projector) -> None:
    event = _approval("desk")

    state = await _handled(
        projector, event, {HEADER_SENDER_CLAIM: SIGNER.header("desk", event.to_bytes())}
    )

    assert state == "EXECUTING_ACTION"


@pytest.mark.parametrize(
    ("claim", "reason"),
    [
        (None, "sender_unsigned"),
        ("v1.desk.bm90LWEtc2lnbmF0dXJl", "sender_unsigned"),
        ("desk", "sender_unsigned"),
        ("moved", "sender_unsigned"),
        ("tickets", "sender_mismatch"),
    ],
)
async def test_a_sender_without_the_gateways_signature_is_refused_with_its_reason(
    projector: Projector, store: InMemoryWorkflowStore, claim: str | None, reason: str
) -> None:
    event = _approval("desk")
    body = event.to_bytes()
    headers = {}
    if claim == "moved":  # a valid claim, made for another message's body
        headers[HEADER_SENDER_CLAIM] = SIGNER.header("desk", _approval("tickets").to_bytes())
    elif claim == "tickets":  # signed for another sender than the event id names
        headers[HEADER_SENDER_CLAIM] = SIGNER.header("tickets", body)
    elif claim is not None:
        headers[HEADER_SENDER_CLAIM] = claim
    before, audit_before = await checkpoint(store, "wf-1"), store.audit("wf-1")

    with pytest.raises(MalformedMessage) as refused:
        await _handled(projector, event, headers)

    assert refused.value.reason == reason
    assert "gateway" in refused.value.detail
    assert await checkpoint(store, "wf-1") == before
    assert store.audit("wf-1") == audit_before


async def test_another_clients_messages_need_no_claim(projector: Projector) -> None:
    inbound = projector.inbound(subjects.request("support", "upstream"), b"{}", {})

    assert inbound.claim_checked
    assert inbound.claimed is None
    start = envelope("START", workflow_id="wf-2", occurred_at=utcnow())
    assert (await projector.handle(start, inbound=inbound)).accepted
