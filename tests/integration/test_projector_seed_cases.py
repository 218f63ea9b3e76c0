"""The support workflow's named cases, through NATS into the real projector and real
Postgres."""

from __future__ import annotations

from interlock.contracts import subjects
from tests.support.drive import answer, recommend_and_validate, signal, start, to_awaiting_approval
from tests.support.harness import Harness
from tests.support.payloads import PAYLOADS, envelope


async def test_execute_before_approval_is_rejected(h: Harness) -> None:
    workflow_id = await start(h)

    decision = await answer(h, workflow_id, "ACTION_EXECUTED", stage="execute_action")

    # The only open job is the classifier's: no effect can be reported before approval.
    assert (decision["accepted"], decision["reason"]) == (False, "job_of_another_stage")
    view = await h.view(workflow_id)
    assert (view["state"], view["version"]) == ("CLASSIFYING", 1)


async def test_stale_approval_is_rejected(h: Harness) -> None:
    workflow_id = await start(h)
    await to_awaiting_approval(h, workflow_id)
    changes = {**PAYLOADS["CHANGES_REQUESTED"], "recommendation_version": 1}
    assert (await signal(h, workflow_id, "CHANGES_REQUESTED", changes))["accepted"]
    await recommend_and_validate(h, workflow_id, version=2)
    before = await h.view(workflow_id)

    stale = await signal(
        h, workflow_id, "APPROVED", {"recommendation_version": 1, "amount": "20.00"}
    )

    assert (stale["accepted"], stale["reason"]) == (False, "guard_rejected")
    assert "!version_current" in stale["guard_results"]
    after = await h.view(workflow_id)
    assert (after["state"], after["version"]) == ("AWAITING_APPROVAL", before["version"])


async def test_duplicate_event_has_no_second_effect(h: Harness) -> None:
    workflow_id = await start(h)
    view = await h.view(workflow_id)
    (job_id,) = view["execution"]["open_jobs"]
    event = envelope("CLASSIFICATION_SUCCEEDED", workflow_id=workflow_id, causation_id=job_id)

    await h.publish(event, subjects.result("support", "classify"), msg_id="first")
    await h.at_state(workflow_id, "GATHERING_EVIDENCE")
    await h.publish(event, subjects.result("support", "classify"), msg_id="second-delivery")
    marker = await signal(h, workflow_id, "CANCEL_REQUESTED", role="operator")

    after = await h.view(workflow_id)
    rows = [a for a in after["audit"] if a["event_id"] == event.event_id]
    assert len(rows) == 1
    assert marker["state_version"] == 3  # START, CLASSIFIED, CANCEL: the duplicate added none


async def test_retryable_error_in_executing_action_is_refused(h: Harness) -> None:
    workflow_id = await start(h)
    await to_awaiting_approval(h, workflow_id)
    assert (await signal(h, workflow_id, "APPROVED"))["accepted"]
    await h.at_state(workflow_id, "EXECUTING_ACTION")

    decision = await answer(h, workflow_id, "RETRYABLE_ERROR")

    assert (decision["accepted"], decision["reason"]) == (False, "invalid_transition")
    view = await h.view(workflow_id)
    assert view["state"] == "EXECUTING_ACTION"


async def test_terminal_workflow_rejects_late_approval(h: Harness) -> None:
    workflow_id = await start(h)
    await to_awaiting_approval(h, workflow_id)
    assert (await signal(h, workflow_id, "CANCEL_REQUESTED"))["accepted"]
    cancelled = await h.at_state(workflow_id, "CANCELLED")

    late = await signal(h, workflow_id, "APPROVED")

    assert (late["accepted"], late["reason"]) == (False, "terminal")
    view = await h.view(workflow_id)
    assert (view["state"], view["version"]) == ("CANCELLED", cancelled["version"])
