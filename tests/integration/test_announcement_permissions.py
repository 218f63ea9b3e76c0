"""Announcements stay with their tenant and type: a client limited to one tenant or one workflow
type reads nothing else, neither by subscribing nor through a consumer of the announcements
stream; it creates consumers only under its own names (eight at most) and cannot read through,
nor delete, another client's. A client allowed everything subscribes as it always did.

The broker of this module has clients of its own (the session's has only the defaults)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import nats
import nats.errors
import nats.js.errors
import pytest
from nats.aio.client import Client
from nats.aio.subscription import Subscription
from nats.js.api import ConsumerConfig, DeliverPolicy

from interlock.app.embedded import EmbeddedNats
from interlock.config import access, natsconf
from interlock.config.secrets import Secrets
from interlock.contracts import subjects
from interlock.contracts.clients import ClientPolicy
from interlock.contracts.urls import nats_inbox
from interlock.messaging import permissions as broker
from interlock.messaging.streams import provision
from tests.support.workflows import REGISTRY, STAGES

pytestmark = pytest.mark.timeout(90)
REFUSED = 1.0
"""Seconds to wait for an API answer that never comes (the broker drops a forbidden request)."""
INSTALLED = ["support", "request", "invoice"]
Connect = Callable[[str], Awaitable[Client]]
CLIENTS = {
    "globex_desk": ClientPolicy(publish={"signal"}, types={"*"}, tenants={"globex"}),
    "support_desk": ClientPolicy(publish={"signal"}, types={"support"}, tenants={"*"}),
    "invoice_desk": ClientPolicy(publish={"signal"}, types={"invoice"}, tenants={"*"}),
    "everything": ClientPolicy(publish={"signal"}, types={"*"}, tenants={"*"}),
}


@pytest.fixture(scope="module")
def broker_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Secrets]]:
    home = tmp_path_factory.mktemp("announcement-broker")
    secrets = Secrets(home / "secrets")
    allowed = access.permissions_of(STAGES, CLIENTS, INSTALLED)
    config = natsconf.render(
        host="127.0.0.1",
        port=-1,
        store_dir=home / "jetstream",
        passwords=secrets.nats_passwords(list(allowed)),
        permissions=allowed,
    )
    server = EmbeddedNats(home, config=config)
    url = server.start()
    yield access.without_credentials(url), secrets
    server.stop()


@pytest.fixture
async def connect(broker_url: tuple[str, Secrets]) -> AsyncIterator[Connect]:
    server, secrets = broker_url
    opened: list[Client] = []
    admin = await _open(access.nats_url_as(server, broker.ADMIN, secrets))
    opened.append(admin)
    manager = admin.jsm()
    for info in await manager.streams_info():
        await manager.delete_stream(info.config.name or "")
    await provision(admin.jetstream(), REGISTRY.stages())

    async def as_identity(identity: str) -> Client:
        nc = await _open(access.nats_url_as(server, identity, secrets))
        opened.append(nc)
        return nc

    yield as_identity
    for nc in opened:
        await nc.close()


async def _open(url: str) -> Client:
    return await nats.connect(url, inbox_prefix=nats_inbox(url), error_cb=_quiet)


async def _quiet(_error: Exception) -> None:
    """Permission violations arrive here; the tests look at their effect instead."""


async def _announce(relay: Client, tenant: str, workflow_type: str, event: str) -> bytes:
    """Publish an announcement as the projector does (both subjects); its body."""
    body = json.dumps({"tenant_id": tenant, "workflow_type": workflow_type}).encode()
    for subject in (
        subjects.out(workflow_type, event),
        subjects.tenant_out(tenant, workflow_type, event),
    ):
        await relay.jetstream().publish(subject, body)
    return body


async def _received(subscription: Subscription) -> list[bytes]:
    """What a subscription holds now (delivered in publish order on its connection)."""
    found = []
    while subscription.pending_msgs:
        found.append((await subscription.next_msg(timeout=1)).data)
    return found


async def _refused_call(call: Awaitable[object]) -> bool:
    try:
        await call
    except (TimeoutError, nats.errors.TimeoutError):
        return True
    return False


async def test_a_client_limited_to_globex_receives_none_of_acmes_announcements(
    connect: Connect,
) -> None:
    relay = await connect("relay")
    globex = await connect("globex_desk")
    every_tenant = await globex.subscribe("wf.out.support.>")
    acme_tenant = await globex.subscribe(subjects.tenant_out("acme", "support", ">"))
    own = await globex.subscribe(subjects.tenant_out("globex", "support", ">"))
    await globex.flush()

    await _announce(relay, "acme", "support", "approval_requested")
    theirs = await _announce(relay, "globex", "support", "approval_requested")

    assert (await own.next_msg(timeout=5)).data == theirs
    await globex.flush()
    assert await _received(every_tenant) == []
    assert await _received(acme_tenant) == []


async def test_a_client_limited_to_globex_cannot_read_acme_through_a_consumer(
    connect: Connect,
) -> None:
    relay = await connect("relay")
    globex = await connect("globex_desk")
    await _announce(relay, "acme", "support", "approval_requested")
    theirs = await _announce(relay, "globex", "support", "approval_requested")
    js = globex.jetstream(timeout=REFUSED)
    name = subjects.out_consumers("globex_desk")[0]

    for filter_subject in ("wf.out.support.>", subjects.tenant_out("acme", "support", ">")):
        assert await _refused_call(js.pull_subscribe(filter_subject, durable=name))
    assert await _refused_call(
        js.subscribe("wf.out.support.approval_requested", ordered_consumer=True)
    )
    own = await js.pull_subscribe(subjects.tenant_out("globex", "support", ">"), durable=name)
    assert [m.data for m in await own.fetch(2, timeout=2)] == [theirs]


async def test_a_support_only_client_cannot_read_invoice_announcements(connect: Connect) -> None:
    relay = await connect("relay")
    support = await connect("support_desk")
    invoices = await support.subscribe("wf.out.invoice.>")
    tasks = await support.subscribe("wf.out.support.>")
    await support.flush()
    await _announce(relay, "acme", "invoice", "approval_requested")
    done = await _announce(relay, "acme", "support", "completed")

    assert (await tasks.next_msg(timeout=5)).data == done
    assert await _received(invoices) == []
    js, name = support.jetstream(timeout=REFUSED), subjects.out_consumers("support_desk")[0]
    assert await _refused_call(js.pull_subscribe("wf.out.invoice.>", durable=name))
    # One allowed filter in the create subject, a forbidden one in the configuration.
    sneaky = ConsumerConfig(
        name=name,
        filter_subject="wf.out.support.>",
        filter_subjects=["wf.out.invoice.>"],
        deliver_policy=DeliverPolicy.ALL,
    )
    with pytest.raises(nats.js.errors.BadRequestError):  # the broker's filter mismatch
        await support.jsm().add_consumer(subjects.STREAM_OUT, sneaky, timeout=REFUSED)


async def test_a_client_cannot_read_through_nor_delete_another_clients_consumer(
    connect: Connect,
) -> None:
    admin = await connect(broker.ADMIN)
    relay = await connect("relay")
    invoice = await connect("invoice_desk")
    support = await connect("support_desk")
    await _announce(relay, "acme", "invoice", "approval_requested")
    theirs = subjects.out_consumers("invoice_desk")[0]
    await invoice.jetstream().pull_subscribe("wf.out.invoice.>", durable=theirs)

    assert await _refused_call(
        support.jsm(timeout=REFUSED).delete_consumer(subjects.STREAM_OUT, theirs)
    )
    borrowed = await support.jetstream().pull_subscribe_bind(
        durable=theirs, stream=subjects.STREAM_OUT
    )
    assert await _refused_call(borrowed.fetch(1, timeout=REFUSED))
    info = await admin.jsm().consumer_info(subjects.STREAM_OUT, theirs)
    assert info.num_pending == 1


async def test_consumers_of_announcements_are_capped_per_client(connect: Connect) -> None:
    admin = await connect(broker.ADMIN)
    support = await connect("support_desk")
    js = support.jetstream(timeout=REFUSED)
    own = subjects.out_consumers("support_desk")

    for name in own:
        await js.pull_subscribe("wf.out.support.>", durable=name)
    assert await _refused_call(js.pull_subscribe("wf.out.support.>", durable="support_desk-out-8"))
    assert await _refused_call(js.pull_subscribe("wf.out.support.>", durable="extra"))
    assert await _refused_call(js.subscribe("wf.out.support.>", ordered_consumer=True))
    info = await admin.jsm().stream_info(subjects.STREAM_OUT)
    assert info.state.consumer_count == len(own) == subjects.OUT_CONSUMERS_PER_CLIENT
    assert info.config.max_consumers == subjects.OUT_MAX_CONSUMERS


async def test_a_client_allowed_everything_subscribes_as_it_always_did(connect: Connect) -> None:
    relay = await connect("relay")
    client = await connect("everything")
    tasks = await client.subscribe("wf.out.support.approval_requested")
    ordered = await client.jetstream().subscribe("wf.out.support.>", ordered_consumer=True)
    await client.flush()

    sent = [
        await _announce(relay, tenant, "support", "approval_requested")
        for tenant in ("acme", "globex")
    ]

    assert [(await tasks.next_msg(timeout=5)).data for _ in sent] == sent
    assert [(await ordered.next_msg(timeout=5)).data for _ in sent] == sent
    assert await _received(tasks) == []
