"""Every model call is its own record, appended by the engine from the committed result; the
workflow's spend adds them up; a model step the budget does not allow goes to review."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from interlock.contracts.model_calls import ACCEPTED_CALLS, MAX_KEPT, ModelSpend
from interlock.projector.digest import decided_data, outcome
from interlock.projector.engine import Accepted, Context, resolve
from interlock.projector.engine.model import Workflow
from interlock.projector.service import validated
from tests.support.decisions import T0, started
from tests.support.payloads import CALL, PAYLOADS, envelope, result_event
from tests.support.workflows import REGISTRY

DIGEST = "ab" * 32


def _call(**fields: Any) -> dict[str, Any]:
    return {**CALL, "task": "classify", "input_digest": DIGEST, **fields}


INVALID = {
    "call": _call(
        validation="failed",
        errors=["category: not one of billing, access, technical"],
        tokens={"prompt": 300, "completion": 40},
        cost="0.0004",
        trace_id="1" * 32,
    )
}
REPAIRED = {
    "category": "billing",
    "confidence": 0.9,
    "call": _call(repair=True, tokens={"prompt": 350, "completion": 30}, cost="0.00041"),
}


def decide(wf: Workflow, event_type: str, payload: dict[str, Any], **parameters: Any) -> Accepted:
    definition = REGISTRY.get("support", wf.definition_version)
    jobs = {job: spec.branch for job, spec in wf.execution.open_jobs.items()}
    event = validated(definition, result_event(wf.workflow_id, jobs, event_type, payload))
    decision = resolve(definition, wf, event, Context(now=T0, parameters=parameters))
    assert isinstance(decision, Accepted), decision
    return decision


def test_a_repaired_classification_keeps_both_attempts_in_order() -> None:
    wf = decide(started("wf-rep").workflow, "MODEL_OUTPUT_INVALID", INVALID).workflow
    wf = decide(wf, "CLASSIFICATION_SUCCEEDED", REPAIRED).workflow
    first, second = wf.execution.model_calls
    assert (first.seq, first.attempt, first.verdict) == (1, 1, "invalid")
    assert first.errors == ("category: not one of billing, access, technical",)
    assert (first.tokens.input, first.tokens.output, first.cost) == (300, 40, Decimal("0.0004"))
    assert (first.input_digest, first.trace_id, first.stage) == (DIGEST, "1" * 32, "classify")
    assert (second.seq, second.attempt, second.verdict) == (2, 2, "repaired")
    assert wf.data[ACCEPTED_CALLS] == {"classification": 2}
    spend = wf.execution.model_spend
    assert (spend.calls, spend.tokens_in, spend.tokens_out) == (2, 650, 70)
    assert spend.cost == Decimal("0.00081")


def test_the_record_of_an_attempt_is_never_replaced_by_a_later_one() -> None:
    wf = decide(started("wf-keep").workflow, "MODEL_OUTPUT_INVALID", INVALID).workflow
    before = wf.execution.model_calls[0]
    wf = decide(wf, "CLASSIFICATION_SUCCEEDED", REPAIRED).workflow
    assert wf.execution.model_calls[0] == before


def test_calls_beyond_the_cap_are_added_up_but_not_kept() -> None:
    full = _at_cap(started("wf-cap").workflow)
    after = decide(full, "MODEL_OUTPUT_INVALID", INVALID).workflow
    assert len(after.execution.model_calls) == MAX_KEPT
    assert after.execution.model_calls == full.execution.model_calls
    assert after.execution.model_spend.calls == MAX_KEPT + 1
    assert after.execution.model_spend.tokens_in == 300
    assert after.execution.model_spend.dropped == 1


def _at_cap(wf: Workflow) -> Workflow:
    decided = decide(started("wf-fill").workflow, "MODEL_OUTPUT_INVALID", INVALID).workflow
    record = decided.execution.model_calls[0]
    records = tuple(record.model_copy(update={"seq": n + 1}) for n in range(MAX_KEPT))
    spend = ModelSpend(calls=MAX_KEPT)
    execution = wf.execution.model_copy(update={"model_calls": records, "model_spend": spend})
    return wf.model_copy(update={"execution": execution})


def test_a_result_without_a_model_call_records_none() -> None:
    wf = decide(started("wf-none").workflow, "CLASSIFICATION_SUCCEEDED", REPAIRED).workflow
    wf = decide(wf, "POLICY_RETRIEVED", PAYLOADS["POLICY_RETRIEVED"]).workflow
    assert [c.seq for c in wf.execution.model_calls] == [1]


def test_a_model_step_over_the_budget_goes_to_review_instead_of_being_dispatched() -> None:
    budget = {"model_budget_tokens": 1000}
    wf = decide(started("wf-budget").workflow, "CLASSIFICATION_SUCCEEDED", _used(600), **budget)
    wf1 = decide(wf.workflow, "POLICY_RETRIEVED", PAYLOADS["POLICY_RETRIEVED"], **budget)
    joined = decide(wf1.workflow, "ACCOUNT_INSPECTED", PAYLOADS["ACCOUNT_INSPECTED"], **budget)
    assert joined.workflow.state == "MANUAL_REVIEW"
    assert joined.note == "budget_exhausted"
    assert "!model_budget" in joined.guard_results
    review = joined.workflow.execution.review
    assert review is not None
    assert (review.reason, review.target) == ("budget_exhausted", "GENERATING_RECOMMENDATION")
    assert not joined.workflow.execution.open_jobs  # nothing dispatched to the model


def test_within_the_budget_the_model_step_is_dispatched() -> None:
    budget = {"model_budget_tokens": 1200, "model_budget_cost": "1.00"}
    wf = decide(started("wf-ok").workflow, "CLASSIFICATION_SUCCEEDED", _used(600), **budget)
    wf1 = decide(wf.workflow, "POLICY_RETRIEVED", PAYLOADS["POLICY_RETRIEVED"], **budget)
    joined = decide(wf1.workflow, "ACCOUNT_INSPECTED", PAYLOADS["ACCOUNT_INSPECTED"], **budget)
    assert joined.workflow.state == "GENERATING_RECOMMENDATION"


def test_a_money_budget_refuses_a_repair_that_would_exceed_it() -> None:
    stopped = decide(
        started("wf-cost").workflow, "MODEL_OUTPUT_INVALID", INVALID, model_budget_cost="0.0005"
    )
    assert (stopped.workflow.state, stopped.note) == ("MANUAL_REVIEW", "budget_exhausted")


def test_the_records_are_compared_apart_from_data_and_execution() -> None:
    without = decide(
        started("wf-dig").workflow, "CLASSIFICATION_SUCCEEDED", PAYLOADS["CLASSIFICATION_SUCCEEDED"]
    )
    assert ACCEPTED_CALLS not in decided_data(without.workflow.data)
    assert "model_calls" in outcome(without)


def _used(tokens: int) -> dict[str, Any]:
    call = _call(tokens={"prompt": tokens - 100, "completion": 100})
    return {"category": "billing", "confidence": 0.9, "call": call}


def _retried(wf: Workflow, **parameters: Any) -> Accepted:
    definition = REGISTRY.get("support", wf.definition_version)
    event = validated(definition, envelope("RETRY_REQUESTED", workflow_id=wf.workflow_id))
    decision = resolve(definition, wf, event, Context(now=T0, parameters=parameters))
    assert isinstance(decision, Accepted), decision
    return decision


def test_a_reviewers_retry_runs_the_model_step_once_the_budget_was_raised() -> None:
    budget = {"model_budget_tokens": 1000}
    wf = decide(started("wf-raise").workflow, "CLASSIFICATION_SUCCEEDED", _used(600), **budget)
    wf1 = decide(wf.workflow, "POLICY_RETRIEVED", PAYLOADS["POLICY_RETRIEVED"], **budget)
    stopped = decide(wf1.workflow, "ACCOUNT_INSPECTED", PAYLOADS["ACCOUNT_INSPECTED"], **budget)

    again = _retried(stopped.workflow, **budget)
    assert (again.workflow.state, again.note) == ("MANUAL_REVIEW", "budget_exhausted")
    assert again.workflow.execution.review is not None
    assert not again.workflow.execution.open_jobs

    raised = _retried(stopped.workflow, model_budget_tokens=5000)
    assert raised.workflow.state == "GENERATING_RECOMMENDATION"
    (job,) = raised.workflow.execution.open_jobs.values()
    assert job.stage == "generate_recommendation"
