"""Drive a support workflow through the real projector by publishing what stages would."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from interlock.contracts import subjects
from interlock.contracts.ids import workflow_id_for
from interlock.contracts.partitions import key_of
from tests.support.harness import Harness
from tests.support.payloads import PAYLOADS, envelope, result_event


async def start(h: Harness, payload: dict[str, Any] | None = None) -> str:
    event = envelope(
        "START",
        workflow_id=None,
        payload=payload or PAYLOADS["START"],
        event_id=f"req-{uuid.uuid4()}",
    )
    await h.publish(event)
    workflow_id = workflow_id_for("support", event.tenant_id, event.event_id)
    await h.at_state(workflow_id, "CLASSIFYING")
    return workflow_id


async def answer(
    h: Harness,
    workflow_id: str,
    event_type: str,
    payload: dict[str, Any] | None = None,
    *,
    wait: bool = True,
    stage: str | None = None,
) -> dict[str, Any]:
    """Publish a stage result answering the workflow's open job (as the stage of that job,
    or as `stage`), and await the decision."""
    view = await h.view(workflow_id)
    open_jobs = view["execution"]["open_jobs"]
    jobs = {j: spec.get("branch") for j, spec in open_jobs.items()}
    event = result_event(workflow_id, jobs, event_type, payload)
    stage = stage or str(open_jobs.get(event.causation_id, {}).get("stage", "classify"))
    await h.publish(event, subjects.result("support", stage, key_of(event)))
    return await h.decided(workflow_id, event.event_id) if wait else {}


async def signal(
    h: Harness,
    workflow_id: str,
    event_type: str,
    payload: dict[str, Any] | None = None,
    role: str | None = None,
) -> dict[str, Any]:
    event = envelope(
        event_type,
        workflow_id=workflow_id,
        payload=payload,
        role=role,
        event_id=f"sig-{uuid.uuid4()}",
    )
    await h.publish(event)
    return await h.decided(workflow_id, event.event_id)


async def to_awaiting_approval(h: Harness, workflow_id: str, version: int = 1) -> None:
    for event_type in ("CLASSIFICATION_SUCCEEDED", "POLICY_RETRIEVED", "ACCOUNT_INSPECTED"):
        assert (await answer(h, workflow_id, event_type))["accepted"]
    await recommend_and_validate(h, workflow_id, version)


async def recommend_and_validate(h: Harness, workflow_id: str, version: int) -> None:
    assert (await answer(h, workflow_id, "RECOMMENDATION_GENERATED"))["accepted"]
    valid = {**PAYLOADS["POLICY_VALID"], "recommendation_version": version}
    assert (await answer(h, workflow_id, "POLICY_VALID", valid))["accepted"]
    await h.at_state(workflow_id, "AWAITING_APPROVAL")


async def race_cancels(
    h: Harness, workflow_id: str, count: int = 40
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Take the workflow to EXECUTING_ACTION, then publish `count` CANCELs at once: the view
    it entered that state with, and the decision on each CANCEL."""
    await to_awaiting_approval(h, workflow_id)
    assert (await signal(h, workflow_id, "APPROVED"))["accepted"]
    entered = await h.at_state(workflow_id, "EXECUTING_ACTION")
    cancels = [
        envelope("CANCEL_REQUESTED", workflow_id=workflow_id, event_id=f"cancel-{i}")
        for i in range(count)
    ]
    await asyncio.gather(*(h.publish(e) for e in cancels))
    return entered, [await h.decided(workflow_id, e.event_id) for e in cancels]


async def start_then_cancel_each(h: Harness, prefix: str, count: int) -> None:
    """Publish START then CANCEL_REQUESTED for `count` workflows, back to back, and check
    each cancellation was decided after its request: accepted, CANCELLED."""
    pairs = []
    for i in range(count):
        workflow_id = f"{prefix}-{i}"
        await h.publish(envelope("START", workflow_id=workflow_id, event_id=f"{prefix}-req-{i}"))
        cancel = envelope(
            "CANCEL_REQUESTED",
            workflow_id=workflow_id,
            role="operator",
            event_id=f"{prefix}-cancel-{i}",
        )
        await h.publish(cancel)
        pairs.append((workflow_id, cancel.event_id))
    for workflow_id, cancel_id in pairs:
        decision = await h.decided(workflow_id, cancel_id)
        assert (decision["accepted"], decision["to_state"]) == (True, "CANCELLED")
