"""After the refund, every path tells the truth: a support workflow whose refund stands never
ends `CANCELLED` or `REJECTED`, `COMPLETED` owes the notification, and an unknown outcome has
ways out (confirm, re-run under the same key, compensate). Driven through the projector, with
the definition new workflows start on."""

from __future__ import annotations

import pytest

from interlock.contracts.envelope import utcnow
from interlock.projector.engine import Context, Rejected, resolve
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from tests.support.direct import accepted, answer, checkpoint, to_executing_action
from tests.support.payloads import PAYLOADS, envelope
from tests.support.workflows import REGISTRY

KEY = "support-action:wf:v1"
RECEIPT = PAYLOADS["ACTION_EXECUTED"]


@pytest.fixture
def store() -> InMemoryWorkflowStore:
    return InMemoryWorkflowStore()


@pytest.fixture
def projector(store: InMemoryWorkflowStore) -> Projector:
    return Projector(store, registry=REGISTRY)


async def _refunded(projector: Projector, store: InMemoryWorkflowStore, wf: str) -> None:
    await to_executing_action(projector, store, wf)
    await accepted(answer(projector, store, wf, "ACTION_EXECUTED"))
    assert (await checkpoint(store, wf)).state == "NOTIFYING_CUSTOMER"


async def _in_review_after_refund(
    projector: Projector, store: InMemoryWorkflowStore, wf: str
) -> None:
    await _refunded(projector, store, wf)
    await accepted(answer(projector, store, wf, "PERMANENT_ERROR"))
    assert (await checkpoint(store, wf)).state == "MANUAL_REVIEW"


async def _unknown(projector: Projector, store: InMemoryWorkflowStore, wf: str) -> None:
    await to_executing_action(projector, store, wf)
    reason = {"reason": "effect_outcome_unknown", "idempotency_key": KEY}
    await accepted(answer(projector, store, wf, "ESCALATE", reason))
    assert (await checkpoint(store, wf)).state == "MANUAL_REVIEW"


async def test_the_engine_keeps_the_refund_as_a_committed_effect_with_its_key(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await _refunded(projector, store, "wf")

    fact = (await checkpoint(store, "wf")).execution.effects["EXECUTING_ACTION"]
    assert (fact.status, fact.idempotency_key) == ("committed", KEY)


async def test_a_cancel_in_retry_wait_after_the_refund_compensates_instead_of_cancelling(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await _refunded(projector, store, "wf")
    await accepted(answer(projector, store, "wf", "RETRYABLE_ERROR"))
    assert (await checkpoint(store, "wf")).state == "RETRY_WAIT"

    outcome = await projector.handle(envelope("CANCEL_REQUESTED", workflow_id="wf"))

    assert (outcome.accepted, outcome.to_state) == (True, "COMPENSATING")


async def test_a_cancel_in_review_after_the_refund_compensates_instead_of_cancelling(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await _in_review_after_refund(projector, store, "wf")

    outcome = await projector.handle(envelope("CANCEL_REQUESTED", workflow_id="wf"))

    assert (outcome.accepted, outcome.to_state) == (True, "COMPENSATING")


async def test_a_reviewers_reject_after_the_refund_is_refused_with_the_effect_named(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await _in_review_after_refund(projector, store, "wf")

    reject = envelope("REJECTED_BY_REVIEWER", workflow_id="wf", role="operator")
    wf = await checkpoint(store, "wf")
    decision = resolve(REGISTRY.latest("support"), wf, reject, Context(now=utcnow()))

    outcome = await projector.handle(reject)

    assert (outcome.accepted, outcome.reason) == (False, "guard_rejected")
    assert isinstance(decision, Rejected)
    assert "!effect_all_none" in decision.guard_results
    assert (await checkpoint(store, "wf")).state == "MANUAL_REVIEW"


async def test_resolving_a_review_after_the_refund_sends_the_notification_it_owes(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await _in_review_after_refund(projector, store, "wf")

    outcome = await projector.handle(envelope("RESOLVED", workflow_id="wf"))

    assert (outcome.accepted, outcome.to_state) == (True, "NOTIFYING_CUSTOMER")


async def test_an_unknown_outcome_is_kept_with_its_key_and_refuses_a_plain_cancel(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await _unknown(projector, store, "wf")
    fact = (await checkpoint(store, "wf")).execution.effects["EXECUTING_ACTION"]
    assert (fact.status, fact.idempotency_key) == ("unknown", KEY)

    outcome = await projector.handle(envelope("CANCEL_REQUESTED", workflow_id="wf"))

    assert (outcome.accepted, outcome.reason) == (False, "guard_rejected")


async def test_confirming_an_unknown_refund_continues_as_executed(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await _unknown(projector, store, "wf")

    outcome = await projector.handle(envelope("EFFECT_CONFIRMED", workflow_id="wf"))

    wf = await checkpoint(store, "wf")
    assert (outcome.accepted, wf.state) == (True, "NOTIFYING_CUSTOMER")
    assert wf.execution.effects["EXECUTING_ACTION"].status == "committed"
    assert wf.data["action"]["provider_operation_id"] == "op-found"


async def test_rerunning_an_unknown_refund_runs_the_action_stage_again(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await _unknown(projector, store, "wf")

    outcome = await projector.handle(envelope("EFFECT_RERUN_REQUESTED", workflow_id="wf"))

    wf = await checkpoint(store, "wf")
    assert (outcome.accepted, wf.state) == (True, "EXECUTING_ACTION")
    assert [j.stage for j in wf.execution.open_jobs.values()] == ["execute_action"]


async def test_compensating_an_unknown_refund_ends_reversed(
    projector: Projector, store: InMemoryWorkflowStore
) -> None:
    await _unknown(projector, store, "wf")
    await accepted(projector.handle(envelope("COMPENSATE", workflow_id="wf")))

    outcome = await answer(projector, store, "wf", "COMPENSATION_SUCCEEDED")

    wf = await checkpoint(store, "wf")
    assert (outcome.to_state, wf.execution.effects["EXECUTING_ACTION"].status) == (
        "FAILED_COMPENSATED",
        "compensated",
    )


@pytest.mark.parametrize("recovery", ["EFFECT_CONFIRMED", "EFFECT_RERUN_REQUESTED"])
async def test_recovery_commands_need_an_unknown_outcome(
    projector: Projector, store: InMemoryWorkflowStore, recovery: str
) -> None:
    await _in_review_after_refund(projector, store, "wf")

    outcome = await projector.handle(envelope(recovery, workflow_id="wf"))

    assert (outcome.accepted, outcome.reason) == (False, "guard_rejected")
