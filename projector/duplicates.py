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
still that job's answer from that stage, decided once: a duplicate, whatever it says, but for
one answer. An effect's stage that said once that the effect stands and once that it certainly
did not act contradicts itself about the world: the second answer still changes nothing, and
it is refused `rerun_answered_otherwise`, so the audit shows the outcome decided may not be the
one at the provider. An answer that leaves the outcome unknown contradicts nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from interlock.contracts.definition import WorkflowDefinition
from interlock.contracts.effectcheck import effects_of
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


def _answers_job(event: Envelope) -> bool:
    """Whether `event` is a result answering the job its causation names."""
    job_id = event.causation_id
    return job_id is not None and event.event_id == result_event_id(job_id)


def _same(decided: Mapping[str, Any], event: Envelope) -> bool:
    """Whether `event` is the message decided under its id (`decided`), by `SAME`, or by
    `SAME_JOB` when it is a result answering the job its causation names."""
    fields = SAME_JOB if _answers_job(event) else SAME
    content = event.model_dump(mode="json")
    return all(decided.get(field) == content.get(field) for field in fields)


def _contradicts(definition: WorkflowDefinition, decided: str, again: str) -> bool:
    """Whether a job's answers `decided` and `again` are, for one of `definition`'s effects,
    one that it stands and one that it certainly did not act: both answers of the job of the
    state that acts (an answer means that only there; elsewhere, a compensation's failure is
    not the effect never made)."""
    return any(
        {decided, again} & set(effect.committed) and {decided, again} & set(effect.refused)
        for effect in effects_of(definition)
    )


async def told_apart(
    store: WorkflowStore,
    workflow: Workflow,
    event: Envelope,
    inbound: Inbound | None,
    decision: Rejected,
    *,
    definition: WorkflowDefinition,
) -> Rejected:
    """`decision`, or `event_id_reused` when it is a duplicate of a message it differs from,
    or `rerun_answered_otherwise` when a job's second answer contradicts its first about an
    effect of `definition` (the workflow's)."""
    if decision.reason != "duplicate":
        return decision
    decided = await store.decided(workflow.tenant_id, workflow.workflow_id, event.event_id)
    if decided is None:
        return decision
    who = sender(inbound, event.event_id) if inbound is not None else "an in-process caller"
    before = str(decided.get("type"))
    if not _same(decided, event):
        detail = f"{who} sent a {event.type} under the id of the {before} decided before"
        return Rejected("event_id_reused", detail)
    if _answers_job(event) and _contradicts(definition, before, event.type):
        detail = (
            f"{who} ran the job again and answered {event.type}; {before} was decided and "
            "stands: the outcome at the provider may be the other one"
        )
        return Rejected("rerun_answered_otherwise", detail)
    return decision
