"""An effect whose outcome stays unknown is escalated as such, with its idempotency key, so
the person in manual review checks the provider before anything else."""

from __future__ import annotations

from interlock.errors import ExternalUnavailable, OutcomeUnknown
from interlock.ops.commands import caution
from interlock.projector.service import Projector
from interlock.projector.store.memory import InMemoryWorkflowStore
from interlock.services.runtime.stage import escalation
from tests.support.direct import answer, checkpoint, to_executing_action
from tests.support.workflows import REGISTRY

KEY = "support-action:wf-u:v1"


def test_a_stage_giving_up_on_an_unknown_outcome_escalates_with_the_key() -> None:
    result = escalation(OutcomeUnknown("no answer", idempotency_key=KEY))

    assert result.event_type == "ESCALATE"
    assert result.payload["reason"] == "effect_outcome_unknown"
    assert result.payload["idempotency_key"] == KEY


def test_a_stage_giving_up_on_an_unavailable_system_escalates_without_a_key() -> None:
    result = escalation(ExternalUnavailable("down"))

    assert (result.payload["reason"], "idempotency_key" in result.payload) == (
        "stage_unavailable",
        False,
    )


async def test_the_review_and_its_audit_row_name_the_effect_to_check_first() -> None:
    store = InMemoryWorkflowStore()
    projector = Projector(store, registry=REGISTRY)
    await to_executing_action(projector, store, "wf-u")

    outcome = await answer(
        projector,
        store,
        "wf-u",
        "ESCALATE",
        {"reason": "effect_outcome_unknown", "idempotency_key": KEY},
    )

    assert (outcome.accepted, outcome.to_state) == (True, "MANUAL_REVIEW")
    review = (await checkpoint(store, "wf-u")).execution.review
    assert review is not None
    assert (review.reason, review.idempotency_key) == ("effect_outcome_unknown", KEY)
    entered = store.audit("wf-u")[-1]
    assert entered.detail is not None
    assert "effect_outcome_unknown" in entered.detail
    assert KEY in entered.detail


def test_deciding_a_workflow_whose_effect_outcome_is_unknown_comes_with_a_caution() -> None:
    review = {"reason": "effect_outcome_unknown", "idempotency_key": KEY}

    warned = caution({"state": "MANUAL_REVIEW", "execution": {"review": review}})
    plain = caution({"state": "MANUAL_REVIEW", "execution": {"review": {"reason": "x"}}})

    assert KEY in warned["caution"]
    assert "Check the provider" in warned["caution"]
    assert plain == {}
