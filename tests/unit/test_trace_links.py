"""A message without trace context of its own (a person approving days later, an untraced
client) starts a new trace linked to the trace of the transition it answers, read with the
checkpoint the projector decides on: no query of its own, cached or loaded, and none for a
workflow that does not exist."""

from __future__ import annotations

from typing import Any, cast

import pytest
from opentelemetry.sdk.trace import ReadableSpan

from interlock.config.access import client_policies
from interlock.config.settings import Settings
from interlock.contracts.envelope import parse_envelope
from interlock.projector.consumer import consume
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.fake_msg import FakeBroker, FakeMsg
from tests.support.payloads import envelope
from tests.support.telemetry import recorded
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(20)
CLIENTS = client_policies(Settings())


class Counted(InMemoryWorkflowStore):
    """The in-memory store, counting the reads of a workflow's row."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[str] = []

    async def load(self, tenant_id: str, workflow_id: str, event_id: str | None = None) -> Any:
        self.reads.append("load")
        return await super().load(tenant_id, workflow_id, event_id)


async def _decided(projector: Projector, msg: FakeMsg) -> ReadableSpan:
    """Consume `msg` and return its `projector decide` span."""
    await consume(cast(Any, FakeBroker()), projector, (cast(Any, msg), parse_envelope(msg.data)))
    event_id = parse_envelope(msg.data).event_id
    (span,) = [
        s
        for s in recorded().finished()
        if s.name.startswith("projector decide")
        and (s.attributes or {}).get("messaging.message.id") == event_id
    ]
    return span


async def _started(store: Counted, workflow_id: str) -> tuple[Projector, ReadableSpan]:
    projector = Projector(store, registry=REGISTRY, clients=CLIENTS)
    start = FakeMsg.of(envelope("START", workflow_id=workflow_id, event_id=f"{workflow_id}-s"))
    return projector, await _decided(projector, start)


def _cancel(workflow_id: str, **fields: Any) -> FakeMsg:
    cancel = envelope("CANCEL_REQUESTED", workflow_id=workflow_id, role="operator")
    return FakeMsg.of(cancel.model_copy(update={"event_id": f"{workflow_id}-c"}), **fields)


@pytest.mark.parametrize("projector_of_the_start", [True, False], ids=["cached", "loaded"])
async def test_an_untraced_message_links_to_the_trace_of_its_workflows_last_transition(
    projector_of_the_start: bool,
) -> None:
    recorded()
    store = Counted()
    workflow_id = f"wf-link-{projector_of_the_start}"
    projector, start = await _started(store, workflow_id)
    if not projector_of_the_start:
        projector = Projector(store, registry=REGISTRY, clients=CLIENTS)  # nothing cached
    store.reads.clear()

    decided = await _decided(projector, _cancel(workflow_id))

    assert decided.context.trace_id != start.context.trace_id  # a trace of its own
    assert [link.context.trace_id for link in decided.links] == [start.context.trace_id]
    assert store.reads == ([] if projector_of_the_start else ["load"])


async def test_a_traced_message_continues_its_trace_and_links_nothing() -> None:
    recorded()
    store = Counted()
    projector, _ = await _started(store, "wf-traced")
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    decided = await _decided(projector, _cancel("wf-traced", headers={"traceparent": parent}))

    assert format(decided.context.trace_id, "032x") == "0af7651916cd43dd8448eb211c80319c"
    assert decided.links == ()


async def test_an_untraced_message_for_an_unknown_workflow_costs_no_query_to_link() -> None:
    recorded()
    store = Counted()
    projector = Projector(store, registry=REGISTRY, clients=CLIENTS)

    decided = await _decided(projector, _cancel("wf-nowhere"))

    assert store.reads == ["load"]  # the one the decision needs
    assert decided.links == ()
