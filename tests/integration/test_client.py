"""`interlock.client`: an upstream system starts a workflow, signals it, reads it, waits for a
state and receives its tasks without building envelopes by hand."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import nats
import pytest
from pydantic import ValidationError

from interlock.client import Client, WorkflowView
from interlock.contracts.envelope import Actor
from interlock.errors import PublishFailed
from tests.support.harness import projector_running

pytestmark = pytest.mark.timeout(90)
REQUEST = {
    "customer_id": "c-1",
    "subject": "Refund for a double charge",
    "body": "Charged twice.",
    "amount": "20.00",
    "currency": "EUR",
}


async def test_a_client_starts_reads_waits_and_signals(
    nats_url: str, database_url: str, identity_url: Callable[[str], str]
) -> None:
    async with projector_running(nats_url, database_url):
        upstream = await Client.connect(identity_url("upstream"), database_url=database_url)
        operator = await Client.connect(identity_url("operator"), database_url=database_url)
        try:
            workflow_id = await upstream.start("support", REQUEST, tenant_id="acme")
            view = await upstream.wait_for_state(workflow_id, {"CLASSIFYING"}, within=30)
            assert view.state == "CLASSIFYING"
            shown = await upstream.get(workflow_id)
            assert shown is not None
            assert shown.workflow_type == "support"
            await operator.signal(
                "support",
                workflow_id,
                "CANCEL_REQUESTED",
                {"reason": "test"},
                tenant_id="acme",
                actor=Actor(id="ops", role="operator"),
            )
            done = await operator.wait_for_state(workflow_id, {"CANCELLED"}, within=30)
            assert done.state == "CANCELLED"
        finally:
            await upstream.close()
            await operator.close()


async def test_a_client_receives_its_tasks(
    nats_url: str, identity_url: Callable[[str], str]
) -> None:
    client = await Client.connect(identity_url("approvals"))
    admin = await nats.connect(nats_url)
    try:
        tasks = client.tasks("support", "approval_requested")
        first = asyncio.ensure_future(anext(tasks))
        task = {"workflow_id": "wf-9", "payload": {"amount": "20.00"}}

        async def delivered() -> dict[str, object]:
            while not first.done():
                await admin.publish("wf.out.support.approval_requested", json.dumps(task).encode())
                await asyncio.wait({first}, timeout=0.2)
            return first.result()

        assert (await asyncio.wait_for(delivered(), 10))["workflow_id"] == "wf-9"
        await tasks.aclose()
    finally:
        await admin.close()
        await client.close()


async def test_a_client_receives_one_tenants_tasks(
    nats_url: str, identity_url: Callable[[str], str]
) -> None:
    client = await Client.connect(identity_url("approvals"))
    admin = await nats.connect(nats_url)
    try:
        tasks = client.tasks("support", "approval_requested", tenant_id="acme")
        first = asyncio.ensure_future(anext(tasks))

        async def delivered() -> dict[str, object]:
            while not first.done():
                for tenant in ("globex", "acme"):
                    body = json.dumps({"tenant_id": tenant}).encode()
                    await admin.publish(f"wf.tenant.{tenant}.support.approval_requested", body)
                await asyncio.wait({first}, timeout=0.2)
            return first.result()

        assert (await asyncio.wait_for(delivered(), 10))["tenant_id"] == "acme"
        await tasks.aclose()
    finally:
        await admin.close()
        await client.close()


async def test_closing_the_client_ends_a_tasks_iteration_cleanly(
    nats_url: str, identity_url: Callable[[str], str]
) -> None:
    """A consumer waiting for its next task when the client closes sees the iteration end
    (StopAsyncIteration), not the connection's ConnectionDrainingError."""
    client = await Client.connect(identity_url("approvals"))
    admin = await nats.connect(nats_url)
    try:
        tasks = client.tasks("support", "approval_requested")
        first = asyncio.ensure_future(anext(tasks))
        task = {"workflow_id": "wf-9"}

        async def delivered() -> object:
            while not first.done():
                await admin.publish("wf.out.support.approval_requested", json.dumps(task).encode())
                await asyncio.wait({first}, timeout=0.2)
            return first.result()

        await asyncio.wait_for(delivered(), 10)
        waiting = asyncio.ensure_future(anext(tasks))
        await client.close()
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(waiting, 10)
        await tasks.aclose()
    finally:
        await admin.close()


async def test_a_client_reads_a_typed_frozen_view_of_the_workflow(
    nats_url: str, database_url: str, identity_url: Callable[[str], str]
) -> None:
    async with projector_running(nats_url, database_url):
        upstream = await Client.connect(identity_url("upstream"), database_url=database_url)
        try:
            workflow_id = await upstream.start("support", REQUEST, tenant_id="acme")
            view = await upstream.wait_for_state(workflow_id, {"CLASSIFYING"}, within=30)
        finally:
            await upstream.close()

    assert isinstance(view, WorkflowView)
    assert (view.workflow_id, view.workflow_type, view.tenant_id) == (
        workflow_id,
        "support",
        "acme",
    )
    assert view.state == "CLASSIFYING"
    assert view.audit[0].event_type == "START"
    with pytest.raises(ValidationError):
        view.state = "DONE"  # type: ignore[misc]


async def test_a_publish_the_broker_does_not_permit_says_so(
    nats_url: str, identity_url: Callable[[str], str]
) -> None:
    """`approvals` may signal, not start: the broker refuses the request (its permissions
    are checked on the mapped subject), and the client names that, not a timeout."""
    approvals = await Client.connect(identity_url("approvals"))
    try:
        with pytest.raises(PublishFailed, match="refused by the broker: permissions violation"):
            await approvals.start("support", REQUEST, tenant_id="acme", workflow_id="wf-denied")
    finally:
        await approvals.close()
