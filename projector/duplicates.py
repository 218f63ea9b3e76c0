"""Telling a duplicate from a reused event id.

An event id already decided is a duplicate only when the message is the same one (redelivered,
published twice, a stage's result again): it is dropped and nothing is written. A different
message under that id (another client's signal reusing it, a stage answering its job otherwise
the second time) was dropped the same way, silently: it is refused `event_id_reused` instead, so
the audit shows it with its sender, and still changes nothing. The same message is the same
content: type, actor, causation, expected version and payload (not the time it was sent, which a
stage running its job again stamps anew).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interlock.contracts.envelope import Envelope
from interlock.contracts.subjects import Inbound
from interlock.projector.engine import Rejected, Workflow
from interlock.projector.parking import sender
from interlock.projector.store.port import WorkflowStore

SAME = ("type", "workflow_type", "tenant_id", "actor", "causation_id", "expected_version",
        "payload")  # fmt: skip


def _content(event: Mapping[str, Any]) -> dict[str, Any]:
    return {field: event.get(field) for field in SAME}


async def told_apart(
    store: WorkflowStore,
    workflow: Workflow,
    event: Envelope,
    inbound: Inbound | None,
    decision: Rejected,
) -> Rejected:
    """`decision`, or `event_id_reused` when it is a duplicate of a message it differs from."""
    if decision.reason != "duplicate":
        return decision
    decided = await store.decided(workflow.tenant_id, workflow.workflow_id, event.event_id)
    if decided is None or _content(decided) == _content(event.model_dump(mode="json")):
        return decision
    who = sender(inbound, event.event_id) if inbound is not None else "an in-process caller"
    detail = f"{who} sent a {event.type} under the id of the {decided.get('type')} decided before"
    return Rejected("event_id_reused", detail)
