"""Telling a duplicate from a reused event id.

An event id already decided is a duplicate only when the message is the same one (redelivered,
published twice, a stage's result again): it is dropped and nothing is written. A different
message under that id (another client's signal reusing it, another actor answering a job) was
dropped the same way, silently: it is refused `event_id_reused` instead, so
the audit shows it with its sender, and still changes nothing. The same message is the same
content: type, actor, causation, expected version and payload (not the time it was sent).

A stage's result is the exception: its id derives from its job's, and a job may run twice (the
open-job sweeper re-dispatches a slow one; a job whose ack wait ran out is redelivered). The
second run answers under the same id and may answer otherwise: a model step measures another
latency under another trace, a model says something else, a call that succeeded fails. It is
still that job's answer from that stage, decided once: a duplicate, whatever it says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interlock.contracts.envelope import Envelope
from interlock.contracts.ids import result_event_id
from interlock.contracts.subjects import Inbound
from interlock.projector.engine import Rejected, Workflow
from interlock.projector.parking import sender
from interlock.projector.store.port import WorkflowStore

SAME = ("type", "workflow_type", "tenant_id", "actor", "causation_id", "expected_version",
        "payload")  # fmt: skip
SAME_JOB = ("workflow_type", "tenant_id", "actor", "causation_id")
"""What two answers of one job share however often it ran (see above)."""


def _same(decided: Mapping[str, Any], event: Envelope) -> bool:
    """Whether `event` is the message decided under its id (`decided`), by `SAME`, or by
    `SAME_JOB` when it is a result answering the job its causation names."""
    job_id = event.causation_id
    answers_job = job_id is not None and event.event_id == result_event_id(job_id)
    fields = SAME_JOB if answers_job else SAME
    content = event.model_dump(mode="json")
    return all(decided.get(field) == content.get(field) for field in fields)


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
    if decided is None or _same(decided, event):
        return decision
    who = sender(inbound, event.event_id) if inbound is not None else "an in-process caller"
    detail = f"{who} sent a {event.type} under the id of the {decided.get('type')} decided before"
    return Rejected("event_id_reused", detail)
