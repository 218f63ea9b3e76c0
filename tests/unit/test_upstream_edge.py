"""The upstream edge: a request from outside is checked before it is sent (the client refuses an
unknown type or a payload the type refuses in one line, instead of returning an id that never
becomes a workflow), the gateway may publish requests, and the projector checks a relayed
request against its one sender's own tenants and types."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import interlock
import interlock.errors
from interlock.client import Client
from interlock.config import access
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.clients import relayed_event_id
from interlock.contracts.envelope import Actor, parse_envelope
from interlock.contracts.errors import InterlockError, MalformedMessage
from interlock.contracts.subjects import Inbound
from interlock.errors import InvalidPayload, UnknownWorkflowType
from interlock.messaging.permissions import ADMIN
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.payloads import envelope
from tests.support.subjects import allowed as allowed_by
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)
REQUEST = {
    "customer_id": "c-1",
    "subject": "Refund for a double charge",
    "body": "Charged twice.",
    "amount": "20.00",
    "currency": "EUR",
}
SENDERS = {
    "tickets": {
        "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "roles": ["support_approver"],
        "tenants": ["acme"],
        "actors": ["alice"],
        "types": ["support"],
    },
}
GATEWAY_REQUEST = Inbound("request", "support", "gateway")


@pytest.fixture(autouse=True)
def _own_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INTERLOCK_SECRETS_DIR", str(tmp_path / "secrets"))


class _Broker:
    """A connection whose publishes never come back, as a request to a type the broker does
    not let the client publish for never does (the real one times out)."""

    def __init__(self) -> None:
        self.published: list[str] = []
        self.last_error: Exception | None = None
        """What the broker last said was wrong on the connection (nothing: it just never
        answers)."""

    def jetstream(self) -> _Broker:
        return self

    async def publish(self, subject: str, data: bytes, **_: Any) -> None:
        self.published.append(subject)
        raise TimeoutError


class _Acking(_Broker):
    """A connection whose publishes the broker acknowledges."""

    def __init__(self) -> None:
        super().__init__()
        self.data: list[bytes] = []

    async def publish(self, subject: str, data: bytes, **_: Any) -> None:
        self.published.append(subject)
        self.data.append(data)


def _client(broker: _Broker) -> Client:
    return Client(broker, "upstream", None)  # type: ignore[arg-type]


async def test_the_client_refuses_an_unknown_workflow_type_in_one_line() -> None:
    broker = _Broker()

    with pytest.raises(UnknownWorkflowType) as refused:
        await _client(broker).start("no_such_type", REQUEST, tenant_id="acme")

    assert isinstance(refused.value, InterlockError)
    assert "no_such_type" in str(refused.value)
    assert "\n" not in str(refused.value)
    assert broker.published == []


async def test_the_client_refuses_a_payload_the_type_refuses_before_publishing() -> None:
    broker = _Broker()

    with pytest.raises(InvalidPayload) as refused:
        await _client(broker).start("support", {"customer_id": "c-1"}, tenant_id="acme")

    assert "subject" in str(refused.value)
    assert "c-1" not in str(refused.value)  # names fields, never values
    assert broker.published == []


async def test_a_start_the_broker_does_not_acknowledge_is_an_interlock_error() -> None:
    with pytest.raises(InterlockError):
        await _client(_Broker()).start("support", REQUEST, tenant_id="acme")


async def test_the_client_returns_the_id_a_type_derives_from_the_requests_content() -> None:
    """The invoice type keys its workflows by the document's hash: the id `start` returns is
    the one the projector gives the workflow, not one derived from the event id."""
    broker = _Acking()
    content = base64.b64encode(b"INVOICE\nSupplier: Acme Paper GmbH\n").decode()
    document = {"filename": "a.txt", "media_type": "text/plain", "content_b64": content}

    workflow_id = await _client(broker).start("invoice", {"document": document}, tenant_id="acme")

    assert workflow_id == installed().registry.workflow_id(parse_envelope(broker.data[0]))


async def test_connecting_without_a_running_interlock_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InterlockError) as refused:
        await Client.connect(home=tmp_path)

    assert "interlock up" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_the_client_and_actor_are_exported_from_interlock_and_the_error_root_from_its_errors() -> (
    None
):
    assert interlock.Client is Client
    assert interlock.Actor is Actor
    assert interlock.errors.InterlockError is InterlockError
    assert {"Actor", "Client"} <= set(interlock.__all__)
    assert "InterlockError" in interlock.errors.__all__


def test_the_gateway_may_publish_requests_and_only_as_itself() -> None:
    settings = Settings.model_validate({"gateway_senders": SENDERS})
    permissions = access.broker_permissions(settings)
    subject = subjects.request("support", "gateway")

    publishers = {n for n, p in permissions.items() if _may_publish(p.publish, subject)}

    assert publishers - {ADMIN} == {"gateway"}
    assert access.client_policies(settings)["gateway"].may_publish("request")


def _may_publish(allowed: tuple[str, ...], subject: str) -> bool:
    return allowed_by(allowed, subject)


def _projector() -> tuple[Projector, InMemoryWorkflowStore]:
    settings = Settings.model_validate({"gateway_senders": SENDERS})
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    clients = access.client_policies(settings)
    projector = Projector(
        store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0, clients=clients
    )
    return projector, store


def _relayed_start(sender: str, tenant: str) -> Any:
    start = envelope("START", workflow_id="wf-gw-1", tenant_id=tenant, occurred_at=NOW)
    return start.model_copy(
        update={
            "event_id": relayed_event_id(sender, "msg_1"),
            "actor": Actor(id=sender, role="upstream"),
        }
    )


async def test_a_relayed_request_within_its_senders_grant_starts_the_workflow() -> None:
    projector, store = _projector()

    outcome = await projector.handle(_relayed_start("tickets", "acme"), inbound=GATEWAY_REQUEST)

    assert outcome.accepted
    assert (await store.load("acme", "wf-gw-1")) is not None


async def test_a_relayed_request_for_a_tenant_its_sender_lacks_is_refused() -> None:
    projector, _ = _projector()

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(_relayed_start("tickets", "globex"), inbound=GATEWAY_REQUEST)

    assert refused.value.reason == "client_not_allowed_tenant"


async def test_a_relayed_request_for_a_type_its_sender_lacks_is_refused() -> None:
    settings = Settings.model_validate(
        {"gateway_senders": {"tickets": {**SENDERS["tickets"], "types": ["request"]}}}
    )
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    clients = access.client_policies(settings)
    projector = Projector(
        store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0, clients=clients
    )

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(_relayed_start("tickets", "acme"), inbound=GATEWAY_REQUEST)

    assert refused.value.reason == "client_not_allowed_type"
