"""Model-call records and budget stops replay exactly, and histories recorded before the engine
kept them still replay without divergence."""

from __future__ import annotations

from dataclasses import replace

from interlock.projector.replay import replay
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.projector.store.records import HistoryRecord
from tests.support.direct import accepted, answer, checkpoint
from tests.support.payloads import CALL, PAYLOADS, envelope
from tests.support.workflows import REGISTRY

INVALID = {"call": {**CALL, "validation": "failed", "errors": ["bad"], "cost": "0.001"}}
REQUEST = {**PAYLOADS["START"], "customer_id": "cust-2"}
USED = {**PAYLOADS["CLASSIFICATION_SUCCEEDED"], "call": {**CALL, "tokens": {"prompt": 900}}}


async def _recorded() -> InMemoryWorkflowStore:
    """One workflow through a repaired classification to approval; one stopped by its budget."""
    store = InMemoryWorkflowStore()
    budget = {"support": {"model_budget_tokens": 1000}}
    projector = Projector(store, registry=REGISTRY, parameters=budget)
    start = envelope("START", workflow_id="wf-rep", payload=PAYLOADS["START"])
    await accepted(projector.handle(start))
    await accepted(answer(projector, store, "wf-rep", "MODEL_OUTPUT_INVALID", INVALID))
    await to_awaiting_approval_from_classifying(projector, store, "wf-rep")
    await accepted(projector.handle(envelope("START", workflow_id="wf-bud", payload=REQUEST)))
    await accepted(answer(projector, store, "wf-bud", "CLASSIFICATION_SUCCEEDED", USED))
    for result in ("POLICY_RETRIEVED", "ACCOUNT_INSPECTED"):
        await accepted(answer(projector, store, "wf-bud", result))
    assert (await checkpoint(store, "wf-bud")).state == "MANUAL_REVIEW"
    return store


async def to_awaiting_approval_from_classifying(
    projector: Projector, store: InMemoryWorkflowStore, wf: str
) -> None:
    await accepted(answer(projector, store, wf, "CLASSIFICATION_SUCCEEDED"))
    for result in ("POLICY_RETRIEVED", "ACCOUNT_INSPECTED", "RECOMMENDATION_GENERATED"):
        await accepted(answer(projector, store, wf, result))
    await accepted(answer(projector, store, wf, "POLICY_VALID"))
    assert (await checkpoint(store, wf)).state == "AWAITING_APPROVAL"


async def test_model_call_records_and_a_budget_stop_replay_without_divergence() -> None:
    store = await _recorded()
    for workflow_id in ("wf-rep", "wf-bud"):
        history = await store.history("acme", workflow_id)
        assert all("model_calls" in h.outcome for h in history if h.accepted)
        assert replay(history, REGISTRY).divergences == ()
    assert len((await checkpoint(store, "wf-rep")).execution.model_calls) == 3


async def test_a_history_recorded_before_model_call_records_replays_without_divergence() -> None:
    store = await _recorded()
    for workflow_id in ("wf-rep", "wf-bud"):
        old = [_before_records(h) for h in await store.history("acme", workflow_id)]
        assert replay(old, REGISTRY).divergences == ()


async def test_a_changed_model_call_record_is_a_divergence() -> None:
    store = await _recorded()
    history = list(await store.history("acme", "wf-rep"))
    index = next(i for i, h in enumerate(history) if h.event["type"] == "MODEL_OUTPUT_INVALID")
    history[index] = replace(
        history[index], outcome={**history[index].outcome, "model_calls": "0" * 16}
    )
    (divergence,) = replay(history, REGISTRY).divergences
    assert divergence.field == "model_calls"


def _before_records(record: HistoryRecord) -> HistoryRecord:
    return replace(record, outcome={k: v for k, v in record.outcome.items() if k != "model_calls"})
