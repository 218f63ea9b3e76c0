"""The request plugin run in-process with `interlock.testing`: its typed stages on a scripted
model and an in-memory effect ledger, its definition decided by the real engine."""

from __future__ import annotations

from typing import Any

from interlock.contracts.envelope import Actor
from interlock.errors import ExternalTimeout
from interlock.testing import WorkflowTestEnv
from interlock.workflows.request import PLUGIN
from tests.support.fake_ports import Ledger, ScriptedModel
from tests.support.loose import loose
from tests.support.request_payloads import DECISION, REQUEST

APPROVER = Actor(id="rita", role="request_approver")
REVIEW = {**REQUEST, "requested_action": "queue_account_review"}
REVIEW_DECISION = {**DECISION, "requested_effect": "queue_account_review"}
FRESH = {"workflow_version": "workflow-1", "policy_version": "policy-1"}


def env_with(*decisions: dict[str, Any] | Exception) -> tuple[WorkflowTestEnv, Ledger]:
    answers = [d for d in decisions if not isinstance(d, Exception)]
    failures = [d for d in decisions if isinstance(d, Exception)]
    ledger = Ledger()
    model = ScriptedModel({"classify_request": answers}, *failures)
    return WorkflowTestEnv(PLUGIN, adapters={"model": model, "effects": ledger}), ledger


def reasons(env: WorkflowTestEnv, wf: str) -> list[str | None]:
    return [a.detail for a in env.audit(wf) if a.to_state == "failed"]


async def test_an_authorised_route_executes_its_effect_once_under_its_authority() -> None:
    env, ledger = env_with(DECISION)
    wf = await env.start(REQUEST)

    await env.run()

    assert await env.state(wf) == "completed"
    data = loose(await env.data(wf))
    assert data["authorization"]["basis"] == "route"
    assert data["effect"]["effect"] == "create_follow_up"
    (row,) = ledger.rows.values()
    assert row.authorized_by["authorization_id"] == data["authorization"]["authorization_id"]
    assert data["versions"]["classifier"] == "s-1"


async def test_an_account_review_waits_for_an_approval_bound_to_the_operation() -> None:
    env, ledger = env_with(REVIEW_DECISION)
    wf = await env.start(REVIEW)
    await env.run()
    assert await env.state(wf) == "approval_required"
    assert ledger.rows == {}

    outcome = await env.send(
        "APPROVED", {**FRESH, "effect": "queue_account_review"}, workflow_id=wf, actor=APPROVER
    )
    await env.run()

    assert outcome.accepted
    assert await env.state(wf) == "completed"
    assert loose(await env.data(wf))["authorization"]["basis"] == "approval"
    assert [r.effect for r in ledger.rows.values()] == ["queue_account_review"]


async def test_an_approval_from_a_role_not_allowed_to_approve_is_refused() -> None:
    env, _ = env_with(REVIEW_DECISION)
    wf = await env.start(REVIEW)
    await env.run()

    outcome = await env.send(
        "APPROVED",
        {**FRESH, "effect": "queue_account_review"},
        workflow_id=wf,
        actor=Actor(id="eve", role="viewer"),
    )

    assert (outcome.accepted, outcome.reason) == (False, "guard_rejected")
    assert await env.state(wf) == "approval_required"


async def test_an_approval_for_another_effect_fails_the_run_as_stale() -> None:
    env, ledger = env_with(REVIEW_DECISION)
    wf = await env.start(REVIEW)
    await env.run()

    await env.send(
        "APPROVED", {**FRESH, "effect": "create_follow_up"}, workflow_id=wf, actor=APPROVER
    )
    await env.run()

    assert (await env.state(wf), reasons(env, wf)) == ("failed", ["approval_stale"])
    assert ledger.rows == {}


async def test_an_approval_not_given_within_its_sla_fails_the_run() -> None:
    env, ledger = env_with(REVIEW_DECISION)
    wf = await env.start(REVIEW)
    await env.run()

    await env.advance(24 * 3600 + 1)

    assert (await env.state(wf), reasons(env, wf)) == ("failed", ["approval_expired"])
    assert ledger.rows == {}


async def test_a_classifier_timeout_is_retried_when_the_backoff_timer_fires() -> None:
    env, _ = env_with(ExternalTimeout("slow"), DECISION)
    wf = await env.start(REQUEST)

    await env.run()
    assert (await env.state(wf), env.armed_timers(wf)) == ("enriched", ["retry"])
    await env.advance(60)

    assert await env.state(wf) == "completed"
    retried = [a for a in env.audit(wf) if a.event_type == "RETRYABLE_ERROR"]
    assert len(retried) == 1


async def test_a_decision_that_contradicts_the_request_is_blocked() -> None:
    env, ledger = env_with({**DECISION, "requested_effect": "send_internal_notification"})
    wf = await env.start(REQUEST)

    await env.run()

    assert await env.state(wf) == "blocked"
    failed = {c["name"] for c in loose(await env.data(wf))["route"]["checks"] if not c["passed"]}
    assert failed == {"effect_matches_request"}
    assert ledger.rows == {}


async def test_an_action_outside_the_allowlist_fails_as_unsupported() -> None:
    env, ledger = env_with(DECISION)
    wf = await env.start({**REQUEST, "requested_action": "delete_everything"})

    await env.run()

    assert (await env.state(wf), reasons(env, wf)) == ("failed", ["unsupported_request"])
    assert (await env.data(wf))["eligibility"] == {
        "requested_action": "delete_everything",
        "allowed": ["create_follow_up", "queue_account_review", "send_internal_notification"],
    }
    assert ledger.rows == {}


async def test_a_proposal_outside_the_closed_schema_fails_the_classification() -> None:
    env, _ = env_with({**DECISION, "requested_effect": "delete_record"})
    wf = await env.start(REQUEST)

    await env.run()

    assert (await env.state(wf), reasons(env, wf)) == ("failed", ["classification_invalid"])
    rejected = loose(await env.data(wf))["classification_rejected"]
    assert rejected["call"]["validation"] == "failed"
