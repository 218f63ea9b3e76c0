"""The projector's door for stage results and timer firings: a result counts only from the
stage that owns its job, under the id derived from that job; a timer firing only on the
timer's subject, under its derived id, and not before its time (a premature one is
dead-lettered, neither held nor audited)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from interlock.contracts.errors import MalformedMessage
from interlock.contracts.ids import result_event_id, timer_event_id
from interlock.contracts.subjects import Inbound
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import checkpoint, to_awaiting_approval, to_gathering_evidence
from tests.support.door import (
    APPROVALS,
    CLIENTS,
    UPSTREAM,
    approval_expiry,
    assert_refused,
    new_projector,
    new_store,
    open_jobs,
    stage_result,
)
from tests.support.payloads import envelope
from tests.support.workflows import REGISTRY


@pytest.fixture
def store() -> InMemoryWorkflowStore:
    return new_store()


@pytest.fixture
def projector(store: InMemoryWorkflowStore) -> Projector:
    return new_projector(store)


async def test_a_result_its_stage_does_not_emit_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    forged = stage_result("wf-1", await open_jobs(store), "POLICY_RETRIEVED")

    await assert_refused(
        projector,
        store,
        forged,
        Inbound("result", "support", "execute_action"),
        "event_not_emitted_by_stage",
    )


async def test_a_result_answering_another_stages_job_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    jobs = await open_jobs(store)
    policy_job = next(j for j, branch in jobs.items() if branch == "policy")
    # A generic result any stage may send, for the job of the policy branch, from the account
    # stage.
    forged = stage_result("wf-1", {policy_job: "policy"}, "RETRYABLE_ERROR")

    await assert_refused(
        projector,
        store,
        forged,
        Inbound("result", "support", "inspect_account"),
        "job_of_another_stage",
    )


async def test_a_result_whose_id_is_not_derived_from_its_job_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    real = stage_result("wf-1", await open_jobs(store), "POLICY_RETRIEVED")
    forged = real.model_copy(update={"event_id": "result:made-up"})

    await assert_refused(
        projector, store, forged, Inbound("result", "support", "retrieve_policy"), "bad_result_id"
    )
    outcome = await projector.handle(real, inbound=Inbound("result", "support", "retrieve_policy"))
    assert outcome.accepted, outcome


async def test_the_owning_stages_result_for_its_own_job_is_accepted(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    real = stage_result("wf-1", await open_jobs(store), "ACCOUNT_INSPECTED")

    outcome = await projector.handle(real, inbound=Inbound("result", "support", "inspect_account"))

    assert outcome.accepted, outcome


# --- reserved event ids ----------------------------------------------------------------------


async def test_a_signal_in_the_result_namespace_is_refused_and_the_result_still_counts(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_gathering_evidence(projector, store, "wf-1")
    jobs = await open_jobs(store)
    policy_job = next(j for j, branch in jobs.items() if branch == "policy")
    squatter = envelope(
        "CANCEL_REQUESTED", workflow_id="wf-1", event_id=result_event_id(policy_job)
    )

    await assert_refused(projector, store, squatter, APPROVALS, "reserved_event_id")

    real = stage_result("wf-1", jobs, "POLICY_RETRIEVED")
    outcome = await projector.handle(real, inbound=Inbound("result", "support", "retrieve_policy"))
    assert outcome.accepted, outcome


async def test_a_request_in_the_timer_namespace_is_dead_lettered(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    request = envelope("START", workflow_id="wf-9", event_id=timer_event_id("t-1"))

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(request, inbound=UPSTREAM)

    assert refused.value.reason == "reserved_event_id"
    assert store.audit() == []


# --- timer firings ---------------------------------------------------------------------------


async def test_a_premature_timer_firing_is_dead_lettered_not_held_and_not_audited(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_awaiting_approval(projector, store, "wf-1")
    timer = (await checkpoint(store, "wf-1")).execution.timers["approval"]
    early = await approval_expiry(store)
    audit_before = store.audit("wf-1")

    with pytest.raises(MalformedMessage) as refused:
        await projector.handle(early, inbound=Inbound("timer", "support", None))

    assert refused.value.reason == "timer_not_due"
    assert store.audit("wf-1") == audit_before
    late = Projector(
        store,
        registry=REGISTRY,
        clock=lambda: timer.fire_at + timedelta(seconds=1),
        clients=CLIENTS,
    )
    outcome = await late.handle(early, inbound=Inbound("timer", "support", None))
    assert (outcome.accepted, outcome.to_state) == (True, "MANUAL_REVIEW")


async def test_a_timer_firing_whose_id_is_not_derived_from_its_timer_is_refused(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await to_awaiting_approval(projector, store, "wf-1")
    forged = (await approval_expiry(store)).model_copy(update={"event_id": "timer:made-up"})

    await assert_refused(
        projector, store, forged, Inbound("timer", "support", None), "bad_timer_id"
    )
