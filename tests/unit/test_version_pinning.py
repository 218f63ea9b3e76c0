"""In-flight workflows stay on the definition version they started with: a support workflow
started under v1 runs v1 through every later event while a later version is the latest, its
jobs say v1, and its history replays under v1; a workflow started beside it runs the latest."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from interlock.contracts import subjects
from interlock.projector.engine import Accepted, Context, resolve
from interlock.projector.replay import replay
from interlock.projector.service import Projector, first_checkpoint, validated
from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.projector.store.types import NO_TRACE
from tests.support.direct import accepted, answer, checkpoint
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY

NOW = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


async def _started_under_v1(store: InMemoryWorkflowStore, workflow_id: str) -> None:
    """A request decided while v1 was the latest (as the projector of that release did)."""
    v1 = REGISTRY.get("support", 1)
    request = validated(v1, envelope("START", workflow_id=workflow_id, payload=PAYLOADS["START"]))
    ctx = Context(now=NOW)
    decision = resolve(v1, first_checkpoint(v1, request), request, ctx)
    assert isinstance(decision, Accepted)
    assert await store.create(decision, request, "fp", NO_TRACE, ctx)


async def test_a_v1_workflow_advances_under_v1_while_a_later_version_is_the_latest() -> None:
    assert REGISTRY.latest("support").version > 1
    store = InMemoryWorkflowStore(clock=lambda: NOW)
    projector = Projector(store, registry=REGISTRY, clock=lambda: NOW)
    await _started_under_v1(store, "wf-old")
    states = []

    for result in (
        "CLASSIFICATION_SUCCEEDED",
        "POLICY_RETRIEVED",
        "ACCOUNT_INSPECTED",
        "RECOMMENDATION_GENERATED",
        "POLICY_VALID",
    ):
        await accepted(answer(projector, store, "wf-old", result))
        states.append((await checkpoint(store, "wf-old")).state)
    await accepted(projector.handle(envelope("APPROVED", workflow_id="wf-old")))

    assert states == [
        "RETRIEVING_POLICY",
        "INSPECTING_ACCOUNT",
        "GENERATING_RECOMMENDATION",
        "VALIDATING_POLICY",
        "AWAITING_APPROVAL",
    ]
    old = await checkpoint(store, "wf-old")
    assert (old.state, old.definition_version) == ("EXECUTING_ACTION", 1)
    history = await store.history("acme", "wf-old")
    assert {h.definition_version for h in history} == {1}
    assert replay(history, REGISTRY).divergences == ()
    jobs = [o for o in store.outbox("wf-old") if o.subject.startswith(f"{subjects.JOB_PREFIX}.")]
    assert len(jobs) == 6  # one per stage entered, each dispatched under v1
    assert {json.loads(o.body)["payload"]["definition_version"] for o in jobs} == {1}

    await accepted(
        projector.handle(envelope("START", workflow_id="wf-new", payload=PAYLOADS["START"]))
    )
    await accepted(answer(projector, store, "wf-new", "CLASSIFICATION_SUCCEEDED"))
    new = await checkpoint(store, "wf-new")
    assert (new.state, new.definition_version) == (
        "GATHERING_EVIDENCE",
        REGISTRY.latest("support").version,
    )
