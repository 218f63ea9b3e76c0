"""`request` version 3, run in-process with `interlock.testing`: an out-of-order command is
refused without mutation, a run is cancelled before its effect, and an effect whose outcome
is unknown is confirmed, re-run or compensated (looked up by its key first); the graph
check proves `compensated` reverses the effect on every path and refuses a table that
would end there with the effect standing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from interlock import EffectRequest
from interlock.contracts.envelope import Actor
from interlock.contracts.graphcheck import check
from interlock.definition import Transition
from interlock.errors import ExternalRejected, ExternalTimeout
from interlock.projector.engine import Accepted, Context, Rejected, Workflow, resolve
from interlock.projector.engine.migrate import MIGRATE_EVENT, move, refusal
from interlock.projector.engine.model import EffectFact, Execution, Review
from interlock.testing import WorkflowTestEnv
from interlock.workflows.request import PLUGIN
from interlock.workflows.request.definition import REQUEST_V2, REQUEST_V3
from interlock.workflows.request.stages.compensate import NOTHING_TO_REVERSE
from tests.support.fake_ports import Ledger, ScriptedModel
from tests.support.graph_issues import issue_codes
from tests.support.loose import loose
from tests.support.payloads import envelope
from tests.support.request_payloads import DECISION, REQUEST, request_data

OPERATOR = Actor(id="olga", role="operator")
UPSTREAM = Actor(id="up", role="upstream")
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
RECEIPT = {"operation_id": "op-found", "effect": "create_follow_up", "reconciled": True}


def _env(ledger: Ledger) -> WorkflowTestEnv:
    model = ScriptedModel({"classify_request": [DECISION]})
    return WorkflowTestEnv(PLUGIN, adapters={"model": model, "effects": ledger})


async def _unknown(ledger: Ledger) -> tuple[WorkflowTestEnv, str]:
    """A run whose effect stage gave up with its outcome unknown, waiting in review."""
    env = _env(ledger)
    wf = await env.start(REQUEST)
    await env.run()
    assert await env.state(wf) == "review"
    ledger.lose_answer = False  # the provider answers from now on
    return env, wf


def _happened(ledger: Ledger, key: str | None, wf: str) -> str:
    """The provider shows the effect after all (it took effect; only its answer was lost)."""
    assert key is not None
    ledger.rows[key] = EffectRequest(
        idempotency_key=key, workflow_id=wf, effect="create_follow_up", authorized_by={}
    )
    return key


def _effect(wf: object) -> tuple[str, str | None]:
    fact = wf.execution.effects["executing"]  # type: ignore[attr-defined]
    return fact.status, fact.idempotency_key


async def test_new_runs_start_on_version_3() -> None:
    env = _env(Ledger())
    wf = await env.start(REQUEST)
    assert (await env.workflow(wf)).definition_version == 3


async def test_an_execute_command_before_authorisation_is_refused_without_mutation() -> None:
    env = _env(Ledger())
    wf = await env.start(REQUEST)
    before = await env.workflow(wf)

    outcome = await env.send("EXECUTE_REQUESTED", {}, workflow_id=wf, actor=UPSTREAM)

    assert (outcome.accepted, outcome.reason) == (False, "invalid_transition")
    after = await env.workflow(wf)
    assert (after.state, after.version, after.data) == (before.state, before.version, before.data)
    refused = env.audit(wf)[-1]
    assert (refused.accepted, refused.event_type, refused.reason) == (
        False,
        "EXECUTE_REQUESTED",
        "invalid_transition",
    )
    await env.run()
    assert await env.state(wf) == "completed"  # the run goes on as if never commanded


def test_version_2_keeps_failing_the_run_on_an_out_of_order_command() -> None:
    """Pinning: a run started on v2 keeps the meaning it started with."""
    rows = REQUEST_V2.transitions_from("received", "EXECUTE_REQUESTED")
    assert [(r.target, r.reason) for r in rows] == [("failed", "state_conflict")]
    assert REQUEST_V3.transitions_from("received", "EXECUTE_REQUESTED") == ()


async def test_an_operator_cancels_a_run_before_its_effect() -> None:
    ledger = Ledger()
    env = _env(ledger)
    wf = await env.start(REQUEST)

    outcome = await env.send("CANCEL_REQUESTED", {"reason": "dup"}, workflow_id=wf, actor=OPERATOR)
    await env.run()

    assert (outcome.accepted, await env.state(wf)) == (True, "cancelled")
    assert (await env.data(wf))["cancellation"] == {"reason": "dup"}
    assert ledger.rows == {}


async def test_a_cancellation_needs_an_operator_and_no_effect_in_flight() -> None:
    env, wf = await _unknown(Ledger(ExternalTimeout("x"), lose_answer=True, record=False))
    not_operator = await env.send("CANCEL_REQUESTED", {}, workflow_id=wf, actor=UPSTREAM)
    in_review = await env.send("CANCEL_REQUESTED", {}, workflow_id=wf, actor=OPERATOR)

    assert (not_operator.accepted, in_review.accepted) == (False, False)
    assert in_review.reason == "invalid_transition"
    assert await env.state(wf) == "review"


async def test_an_unknown_effect_waits_in_review_holding_its_key() -> None:
    env, wf = await _unknown(Ledger(lose_answer=True, record=False))

    status, key = _effect(await env.workflow(wf))

    assert status == "unknown"
    assert key is not None
    assert key.startswith("request-effect:")


async def test_compensating_an_unknown_effect_found_by_its_key_reverses_it() -> None:
    ledger = Ledger(lose_answer=True, record=False)
    env, wf = await _unknown(ledger)
    key = _happened(ledger, _effect(await env.workflow(wf))[1], wf)

    outcome = await env.send("COMPENSATE", {}, workflow_id=wf, actor=OPERATOR)
    await env.run()

    assert (outcome.accepted, await env.state(wf)) == (True, "compensated")
    assert _effect(await env.workflow(wf)) == ("compensated", key)
    assert ledger.reversed == {key: "rev-1"}
    assert (await env.data(wf))["compensation"] == {"idempotency_key": key, "reversal_id": "rev-1"}


async def test_compensating_an_effect_nothing_stands_under_reverses_nothing() -> None:
    ledger = Ledger(lose_answer=True, record=False)
    env, wf = await _unknown(ledger)

    await env.send("COMPENSATE", {}, workflow_id=wf, actor=OPERATOR)
    await env.run()

    assert await env.state(wf) == "compensated"
    assert loose(await env.data(wf))["compensation"]["reversal_id"] == NOTHING_TO_REVERSE
    assert ledger.reversed == {}


async def test_a_refused_reversal_returns_to_review_and_may_be_asked_for_again() -> None:
    ledger = Ledger(lose_answer=True, record=False)
    env, wf = await _unknown(ledger)
    _happened(ledger, _effect(await env.workflow(wf))[1], wf)
    ledger.failures.append(ExternalRejected("no", error_class="reversal_refused"))

    await env.send("COMPENSATE", {}, workflow_id=wf, actor=OPERATOR)
    await env.run()
    assert await env.state(wf) == "review"
    assert loose(await env.data(wf))["compensation_failure"]["error_class"] == "reversal_refused"

    again = await env.send("COMPENSATE", {}, workflow_id=wf, actor=OPERATOR)
    await env.run()
    assert (again.accepted, await env.state(wf)) == (True, "compensated")


@pytest.mark.parametrize(
    ("event", "payload", "final", "rows"),
    [("EFFECT_CONFIRMED", RECEIPT, "completed", 0), ("EFFECT_RERUN_REQUESTED", {}, "completed", 1)],
    ids=["confirm", "rerun"],
)
async def test_confirm_and_rerun_still_recover_an_unknown_effect(
    event: str, payload: dict[str, object], final: str, rows: int
) -> None:
    ledger = Ledger(lose_answer=True, record=False)
    env, wf = await _unknown(ledger)
    ledger.record = True
    key = _effect(await env.workflow(wf))[1]
    body = {**payload, "idempotency_key": key} if payload else payload

    outcome = await env.send(event, body, workflow_id=wf, actor=OPERATOR)
    await env.run()

    assert (outcome.accepted, await env.state(wf)) == (True, final)
    assert len(ledger.rows) == rows


def test_every_request_version_passes_the_graph_check() -> None:
    for definition in PLUGIN.definitions:
        assert issue_codes(definition) == set(), definition.version


def test_a_table_that_ends_compensated_with_the_effect_standing_is_refused() -> None:
    wrong = Transition(source="compensating", event="COMPENSATION_FAILED", target="compensated")
    broken = REQUEST_V3.model_copy(update={"transitions": (wrong, *REQUEST_V3.transitions)})

    (message,) = [i.message for i in check(broken) if i.code == "broken_promise"]

    assert message.startswith("request v3: compensated promises")
    assert "-COMPENSATION_FAILED-> compensated" in message


def _v2_run(state: str, **execution: object) -> Workflow:
    return Workflow(
        workflow_id="wf-1",
        workflow_type="request",
        tenant_id="acme",
        state=state,
        version=9,
        definition_version=2,
        data=request_data(),
        execution=Execution(**execution),
    )


def test_a_v2_run_in_review_moved_to_v3_may_then_be_compensated() -> None:
    """The migration of an in-flight run: no rule of its own is needed (every v2 state is in
    v3); the moved run gains v3's ways out."""
    unknown = EffectFact(status="unknown", idempotency_key="request-effect:acme:wf-1:x")
    review = Review(reason="escalated", from_state="executing", event_type="ESCALATE")
    in_review = _v2_run("review", review=review, effects={"executing": unknown})
    assert refusal(REQUEST_V2, REQUEST_V3, in_review, "review") is None
    event = envelope(MIGRATE_EVENT, payload={"to_version": 3, "state": "review"}, role="operator")
    moved = move(REQUEST_V3, in_review, "review", event, Context(now=NOW)).workflow

    compensate = envelope("COMPENSATE", workflow_type="request", payload={}, role="operator")
    decision = resolve(REQUEST_V3, moved, compensate, Context(now=NOW))

    assert isinstance(decision, Accepted)
    assert decision.workflow.state == "compensating"
    assert [m.subject for m in decision.messages][:1] == ["wf.job.request.compensate_effect"]


def test_a_v2_run_moved_to_v3_refuses_the_out_of_order_command() -> None:
    received = _v2_run("received")
    event = envelope(MIGRATE_EVENT, payload={"to_version": 3, "state": "received"})
    moved = move(REQUEST_V3, received, "received", event, Context(now=NOW)).workflow
    command = envelope("EXECUTE_REQUESTED", workflow_type="request", payload={}, role="upstream")

    decision = resolve(REQUEST_V3, moved, command, Context(now=NOW))

    assert isinstance(decision, Rejected)
    assert decision.reason == "invalid_transition"
    assert resolve(REQUEST_V2, received, command, Context(now=NOW)).workflow.state == "failed"  # type: ignore[union-attr]
