"""The `request` definition: its graph proves the effect gate, and its table
decides approvals, retries, resumes and out-of-order commands as documented."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from interlock.definition import Guard, Transition, WorkflowDefinition
from interlock.projector.engine import Accepted, Context, Rejected, resolve
from interlock.projector.engine.model import Execution, OpenJob, Workflow
from interlock.workflows.request.definition import REQUEST_V1
from interlock.workflows.request.table import PRE_APPROVAL
from tests.support.graph_issues import issue_codes
from tests.support.loose import loose
from tests.support.payloads import envelope
from tests.support.request_payloads import REQUEST_PAYLOADS, request_data

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
JOB = "job-1"


def _with(*rows: Transition) -> WorkflowDefinition:
    return REQUEST_V1.model_copy(update={"transitions": (*REQUEST_V1.transitions, *rows)})


def _workflow(state: str, *, job: bool = False, **execution: Any) -> Workflow:
    if job:
        stage = REQUEST_V1.stages[state].name
        execution["open_jobs"] = {JOB: OpenJob(stage=stage)}
    return Workflow(
        workflow_id="wf-1",
        workflow_type="request",
        tenant_id="acme",
        state=state,
        version=4,
        definition_version=1,
        data=request_data(),
        execution=Execution(**execution),
    )


def _decide(
    wf: Workflow,
    event_type: str,
    payload: dict[str, Any] | None = None,
    *,
    parameters: dict[str, Any] | None = None,
    **kw: Any,
) -> Accepted | Rejected:
    body = {**REQUEST_PAYLOADS[event_type], **(payload or {})}
    spec = REQUEST_V1.event(event_type)
    if spec is not None and spec.answers_job:
        kw.setdefault("causation_id", JOB)
    event = envelope(event_type, workflow_type="request", payload=body, occurred_at=NOW, **kw)
    ctx = Context(now=NOW, parameters=parameters or {})
    return resolve(REQUEST_V1, wf, event, ctx)


# --- the graph -------------------------------------------------------------------------


def test_states_are_the_seeds() -> None:
    assert set(REQUEST_V1.states) == {
        "received", "validated", "normalized", "enriched", "classified", "approval_required",
        "approved", "executing", "completed", "blocked", "failed",
    }  # fmt: skip
    assert REQUEST_V1.terminal_states == {"completed", "blocked", "failed"}
    assert REQUEST_V1.effect_states == {"executing"}


def test_a_route_for_approval_straight_into_execution_is_refused() -> None:
    shortcut = Transition(source="classified", event="ROUTED_FOR_APPROVAL", target="executing")
    assert "gate_bypass" in issue_codes(_with(shortcut))


def test_an_authorisation_without_its_guard_is_refused() -> None:
    rows = tuple(
        t.model_copy(update={"guards": ()})
        if (t.source, t.event) == ("approved", "EFFECT_AUTHORIZED")
        else t
        for t in REQUEST_V1.transitions
    )
    assert "gate_bypass" in issue_codes(REQUEST_V1.model_copy(update={"transitions": rows}))


def test_approved_is_entered_only_by_an_approval_checked_against_the_run() -> None:
    into = [t for t in REQUEST_V1.transitions if t.target == "approved" != t.source]
    assert [(t.source, t.event) for t in into] == [("approval_required", "APPROVED")]
    assert {g.name for g in into[0].guards} == {"actor_role_in", "payload_matches"}


# --- approvals --------------------------------------------------------------------------


def test_fresh_approval_resumes_from_the_approval_checkpoint() -> None:
    decision = _decide(_workflow("approval_required"), "APPROVED", role="request_approver")
    assert isinstance(decision, Accepted)
    assert decision.workflow.state == "approved"
    assert decision.workflow.data["approval"]["workflow_version"] == "workflow-1"


@pytest.mark.parametrize(
    "stale",
    [{"workflow_version": "workflow-0"}, {"policy_version": "policy-0"}, {"effect": "other"}],
)
def test_stale_approval_fails_the_run_closed(stale: dict[str, str]) -> None:
    decision = _decide(_workflow("approval_required"), "APPROVED", stale, role="request_approver")
    assert isinstance(decision, Accepted)
    assert (decision.workflow.state, decision.note) == ("failed", "approval_stale")


def test_approval_from_someone_who_may_not_approve_changes_nothing() -> None:
    decision = _decide(_workflow("approval_required"), "APPROVED", role="customer")
    assert isinstance(decision, Rejected)
    assert decision.reason == "guard_rejected"


def test_entering_approval_announces_the_versions_and_effect_to_approve() -> None:
    decision = _decide(_workflow("classified", job=True), "ROUTED_FOR_APPROVAL")
    assert isinstance(decision, Accepted)
    (task,) = [m for m in decision.messages if m.subject == "wf.out.request.approval_requested"]
    assert {k: task.envelope.payload[k] for k in ("workflow_version", "policy_version")} == {
        "workflow_version": "workflow-1",
        "policy_version": "policy-1",
    }
    assert task.envelope.payload["effect"] == "create_follow_up"
    assert task.envelope.payload["workflow_id"] == "wf-1"


def test_an_announcement_also_goes_to_its_tenants_subject() -> None:
    decision = _decide(_workflow("classified", job=True), "ROUTED_FOR_APPROVAL")
    assert isinstance(decision, Accepted)
    tasks = [m for m in decision.messages if m.envelope.type == "APPROVAL_REQUESTED"]
    assert [m.subject for m in tasks] == [
        "wf.out.request.approval_requested",
        "wf.tenant.acme.request.approval_requested",
    ]
    assert tasks[0].envelope == tasks[1].envelope


# --- authorisation ----------------------------------------------------------------------


def _authorised(wf: Workflow, **changes: Any) -> Accepted | Rejected:
    payload = {**REQUEST_PAYLOADS["EFFECT_AUTHORIZED"], **changes}
    payload["fingerprint"] = wf.data["normalization"]["fingerprint"]
    return _decide(wf, "EFFECT_AUTHORIZED", payload)


def test_an_authorised_route_enters_execution() -> None:
    decision = _authorised(_workflow("classified", job=True))
    assert isinstance(decision, Accepted)
    assert decision.workflow.state == "executing"


def test_an_effect_needing_approval_is_never_authorised_by_the_route_alone() -> None:
    wf = _workflow("classified", job=True)
    wf.data["request"]["requested_action"] = "queue_account_review"
    wf.data["classification"]["decision"]["requested_effect"] = "queue_account_review"
    decision = _authorised(wf, effect="queue_account_review")
    assert isinstance(decision, Rejected)
    assert "!effect_not_in_approval_required_effects" in decision.guard_results


def test_an_authorisation_for_another_effect_than_requested_is_refused() -> None:
    decision = _authorised(_workflow("classified", job=True), effect="send_internal_notification")
    assert isinstance(decision, Rejected)
    assert "!effect==request.requested_action" in decision.guard_results


def test_a_bound_approval_must_name_the_approved_operation() -> None:
    wf = _workflow("approved", job=True)
    ok = _authorised(wf, basis="approval")
    wrong_basis = _authorised(wf, basis="route")
    assert isinstance(ok, Accepted)
    assert isinstance(wrong_basis, Rejected)


# --- retries, resume, out-of-order commands, versions ----------------------------------


def test_a_model_timeout_is_retried_durably_then_exhausts() -> None:
    first = _decide(_workflow("enriched", job=True), "RETRYABLE_ERROR")
    assert isinstance(first, Accepted)
    assert first.workflow.state == "enriched"
    assert [(t.event, t.scope) for t in first.timers_armed] == [("RETRY_DUE", "enriched")]
    assert first.timers_armed[0].fire_at - NOW < timedelta(seconds=2)
    second = _decide(_workflow("enriched", job=True, attempts={"enriched": 1}), "RETRYABLE_ERROR")
    assert isinstance(second, Accepted)
    assert (second.workflow.state, second.note) == ("failed", "retry_exhausted")


@pytest.mark.parametrize(("asked", "waits"), [(12.0, 12.0), (3600.0, 30.0)])
def test_a_retry_waits_what_the_failing_system_asked_within_the_policy_cap(
    asked: float, waits: float
) -> None:
    decision = _decide(_workflow("enriched", job=True), "RETRYABLE_ERROR", {"retry_after_s": asked})

    assert isinstance(decision, Accepted)
    (timer,) = decision.timers_armed
    assert timer.fire_at - NOW == timedelta(seconds=waits)


def test_the_attempt_limit_is_a_deployment_parameter() -> None:
    wf = _workflow("enriched", job=True, attempts={"enriched": 1})
    decision = _decide(wf, "RETRYABLE_ERROR", parameters={"max_classifier_attempts": 3})
    assert isinstance(decision, Accepted)
    assert decision.workflow.state == "enriched"


def test_retry_due_issues_the_next_attempt() -> None:
    timer = {"timer_id": "t-1", "fire_at": (NOW - timedelta(seconds=1)).isoformat()}
    armed = _workflow("enriched", attempts={"enriched": 1}).execution.model_dump()
    armed["timers"] = {"retry": {"id": "t-1", "kind": "retry", "event": "RETRY_DUE",
                                 "fire_at": NOW - timedelta(seconds=1)}}  # fmt: skip
    wf = _workflow("enriched").model_copy(update={"execution": Execution(**armed)})
    decision = _decide(wf, "RETRY_DUE", timer)
    assert isinstance(decision, Accepted)
    (job,) = decision.messages
    assert (job.subject, job.envelope.payload["attempt"]) == ("wf.job.request.classify_request", 2)


def test_an_operator_resume_reissues_the_route_job_and_stales_the_old_one() -> None:
    decision = _decide(_workflow("classified", job=True), "RESUME", role="operator")
    assert isinstance(decision, Accepted)
    assert decision.workflow.state == "classified"
    assert JOB not in decision.workflow.execution.open_jobs
    assert [m.subject for m in decision.messages] == ["wf.job.request.route"]
    refused = _decide(_workflow("classified", job=True), "RESUME", role="customer")
    assert isinstance(refused, Rejected)


@pytest.mark.parametrize("state", PRE_APPROVAL)
def test_an_execute_command_before_authorisation_quarantines_the_run(state: str) -> None:
    decision = _decide(_workflow(state), "EXECUTE_REQUESTED", role="upstream")
    assert isinstance(decision, Accepted)
    assert (decision.workflow.state, decision.note) == ("failed", "state_conflict")


@pytest.mark.parametrize("state", ["approved", "executing"])
def test_an_execute_command_after_authorisation_changes_nothing(state: str) -> None:
    decision = _decide(_workflow(state), "EXECUTE_REQUESTED", role="upstream")
    assert isinstance(decision, Rejected)
    assert decision.reason == "invalid_transition"


def test_a_run_records_the_versions_it_runs_under() -> None:
    blank = _workflow("received").model_copy(update={"data": {}, "version": 0})
    started = _decide(blank, "START")
    assert isinstance(started, Accepted)
    assert started.workflow.data["versions"] == {
        "workflow": "workflow-1",
        "normalization": "normalize-1",
    }
    classified = _decide(_workflow("enriched", job=True), "REQUEST_CLASSIFIED")
    assert isinstance(classified, Accepted)
    assert classified.workflow.data["versions"]["prompt"] == "request-classify-v1"


def test_approval_freshness_compares_all_three_facts() -> None:
    row = next(t for t in REQUEST_V1.transitions if t.event == "APPROVED")
    (fresh,) = [g for g in row.guards if g.name == "payload_matches"]
    assert isinstance(fresh, Guard)
    assert set(loose(fresh.params["data"])) == {"workflow_version", "policy_version", "effect"}
