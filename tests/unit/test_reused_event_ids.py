"""Ids nobody else can spend, at the projector: an event id already decided is a duplicate only
when the message is the same one (redelivered, published twice). A different message under it
(another client's signal reusing the id, another actor answering a stage's job)
was dropped as a duplicate with nothing recorded; it is refused `event_id_reused`, audited on the
workflow with its sender named, and changes nothing."""

from __future__ import annotations

from interlock.contracts.envelope import utcnow
from interlock.contracts.subjects import Inbound
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import (
    accepted,
    answer,
    checkpoint,
    to_awaiting_approval,
    to_executing_action,
)
from tests.support.payloads import PAYLOADS, envelope, result_event
from tests.support.workflows import REGISTRY
from tests.unit.test_door_sender_authority import CLIENTS, NOW

APPROVALS = Inbound("signal", "support", "approvals")


def _projector(store: InMemoryWorkflowStore) -> Projector:
    return Projector(store, registry=REGISTRY, clock=lambda: NOW, rand=lambda: 0.0, clients=CLIENTS)


async def _approved(projector: Projector, store: InMemoryWorkflowStore) -> str:
    """wf-1 approved by `approvals`; the approval's event id."""
    await to_awaiting_approval(projector, store, "wf-1")
    approval = envelope("APPROVED", workflow_id="wf-1", occurred_at=utcnow())
    assert (await projector.handle(approval, inbound=APPROVALS)).accepted
    return approval.event_id


async def test_another_message_under_a_decided_event_id_is_refused_and_audited() -> None:
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = _projector(store)
    event_id = await _approved(projector, store)
    before = await checkpoint(store, "wf-1")
    other = envelope(
        "REJECTED_BY_REVIEWER", workflow_id="wf-1", event_id=event_id, occurred_at=utcnow()
    )

    outcome = await projector.handle(other, inbound=APPROVALS)

    refused = [a for a in store.audit("wf-1") if a.event_id == event_id and not a.accepted]
    assert (outcome.accepted, outcome.reason) == (False, "event_id_reused")
    assert [a.reason for a in refused] == ["event_id_reused"]
    assert "approvals" in (refused[0].detail or "")
    assert await checkpoint(store, "wf-1") == before


async def test_the_same_message_again_is_a_duplicate_and_writes_nothing() -> None:
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = _projector(store)
    await to_awaiting_approval(projector, store, "wf-1")
    approval = envelope("APPROVED", workflow_id="wf-1", occurred_at=utcnow())
    assert (await projector.handle(approval, inbound=APPROVALS)).accepted
    audit = store.audit("wf-1")

    again = await projector.handle(approval, inbound=APPROVALS)

    assert (again.accepted, again.reason) == (False, "duplicate")
    assert store.audit("wf-1") == audit


async def test_a_job_run_again_is_a_duplicate_whatever_it_answers_the_second_time() -> None:
    """The open-job sweeper re-dispatches a slow job; the stage runs it again and answers
    under the same event id (it derives from the job id). A model step's second answer
    differs in what it measured (latency, trace) and may differ in what the model said, or
    fail where the first run succeeded: it is the same job's answer, decided once, and the
    rerun writes nothing."""
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = _projector(store)
    await projector.handle(envelope("START", workflow_id="wf-1", payload=PAYLOADS["START"]))
    jobs = (await checkpoint(store, "wf-1")).execution.open_jobs
    first = result_event(
        "wf-1", {j: job.branch for j, job in jobs.items()}, "CLASSIFICATION_SUCCEEDED"
    )
    assert (await projector.handle(first)).accepted
    audit, before = store.audit("wf-1"), await checkpoint(store, "wf-1")

    call = {**first.payload["call"], "latency_ms": 812.5, "trace_id": "f" * 32}
    for rerun in (
        first.model_copy(
            update={
                "occurred_at": utcnow(),
                "payload": {**first.payload, "confidence": 0.61, "call": call},
            }
        ),
        first.model_copy(
            update={"type": "RETRYABLE_ERROR", "payload": PAYLOADS["RETRYABLE_ERROR"]}
        ),
    ):
        again = await projector.handle(rerun)

        assert (again.accepted, again.reason) == (False, "duplicate")
    assert store.audit("wf-1") == audit
    assert await checkpoint(store, "wf-1") == before


async def test_another_sender_under_a_results_id_is_still_refused() -> None:
    """Only the stage that ran the job answers it: the same job id from another actor is a
    reused id."""
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = _projector(store)
    await projector.handle(envelope("START", workflow_id="wf-1", payload=PAYLOADS["START"]))
    jobs = (await checkpoint(store, "wf-1")).execution.open_jobs
    first = result_event(
        "wf-1", {j: job.branch for j, job in jobs.items()}, "CLASSIFICATION_SUCCEEDED"
    )
    assert (await projector.handle(first)).accepted
    other = first.model_copy(
        update={
            "actor": first.actor.model_copy(update={"id": "someone-else"}),
            "type": "RETRYABLE_ERROR",
            "payload": PAYLOADS["RETRYABLE_ERROR"],
        }
    )

    outcome = await projector.handle(other)

    assert (outcome.accepted, outcome.reason) == (False, "event_id_reused")


async def test_an_effect_job_run_again_that_contradicts_its_outcome_is_refused_and_audited() -> (
    None
):
    """The refund's job answered `ACTION_EXECUTED` (decided: the refund stands); run again, it
    answered `PERMANENT_ERROR` (the provider certainly did not act). The second answer changes
    nothing, but it is recorded: the outcome decided may not be the one at the provider. An
    answer that leaves the outcome unknown contradicts nothing and stays a plain duplicate."""
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = _projector(store)
    await to_executing_action(projector, store, "wf-1")
    jobs = (await checkpoint(store, "wf-1")).execution.open_jobs
    first = result_event("wf-1", {j: job.branch for j, job in jobs.items()}, "ACTION_EXECUTED")
    assert (await projector.handle(first)).accepted
    before = await checkpoint(store, "wf-1")

    unknown = await projector.handle(
        first.model_copy(update={"type": "ESCALATE", "payload": PAYLOADS["ESCALATE"]})
    )
    audit = store.audit("wf-1")
    refused = await projector.handle(
        first.model_copy(update={"type": "PERMANENT_ERROR", "payload": PAYLOADS["PERMANENT_ERROR"]})
    )

    assert (unknown.accepted, unknown.reason) == (False, "duplicate")
    assert (refused.accepted, refused.reason) == (False, "rerun_answered_otherwise")
    added = store.audit("wf-1")[len(audit) :]
    assert [(a.event_id, a.accepted, a.reason) for a in added] == [
        (first.event_id, False, "rerun_answered_otherwise")
    ]
    assert "ACTION_EXECUTED" in (added[0].detail or "")
    assert await checkpoint(store, "wf-1") == before


async def test_a_compensation_job_run_again_that_fails_contradicts_no_effect_outcome() -> None:
    """The compensation's job answered `COMPENSATION_SUCCEEDED`; run again, it answered
    `PERMANENT_ERROR`. In the compensating state that is the compensation failing, not the
    refund never having been made (what it means in the state that acts): the rerun contradicts
    nothing it said, and is a plain duplicate."""
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = _projector(store)
    await to_executing_action(projector, store, "wf-1")
    await accepted(answer(projector, store, "wf-1", "POST_ACTION_INVARIANT_FAILED"))
    jobs = (await checkpoint(store, "wf-1")).execution.open_jobs
    first = result_event(
        "wf-1", {j: job.branch for j, job in jobs.items()}, "COMPENSATION_SUCCEEDED"
    )
    assert (await projector.handle(first)).accepted
    audit = store.audit("wf-1")

    again = await projector.handle(
        first.model_copy(update={"type": "PERMANENT_ERROR", "payload": PAYLOADS["PERMANENT_ERROR"]})
    )

    assert (again.accepted, again.reason) == (False, "duplicate")
    assert store.audit("wf-1") == audit
