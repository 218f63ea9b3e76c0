"""The support plugin run in-process with `interlock.testing`: its typed stages on in-memory
ports, its definition decided by the real engine (approval, guards, retries, the SLA)."""

from __future__ import annotations

from typing import Any

from interlock.contracts.envelope import Actor
from interlock.errors import ExternalUnavailable
from interlock.testing import WorkflowTestEnv
from interlock.workflows.support import PLUGIN
from tests.support.fake_ports import Accounts, Actions, Notifier, Policies, ScriptedModel
from tests.support.loose import loose
from tests.support.payloads import REQUEST

APPROVER = Actor(id="alice", role="support_approver")
SUPERVISOR = Actor(id="sam", role="support_supervisor")
DAY = 24 * 3600.0


def answers(amount: str = "20.00") -> dict[str, list[dict[str, Any]]]:
    return {
        "classify": [{"category": "billing", "confidence": 0.92, "rationale": "charged twice"}],
        "recommend": [
            {
                "action_type": "refund",
                "amount": amount,
                "currency": "EUR",
                "rationale": "duplicate charge",
                "evidence_refs": ["policy:refunds:v3"],
            }
        ],
    }


class Desk:
    """The support desk's systems, in memory."""

    def __init__(self, *, accounts: Accounts | None = None, amount: str = "20.00") -> None:
        self.model = ScriptedModel(answers(amount))
        self.accounts = accounts or Accounts()
        self.policies = Policies(max_amount="1000.00")
        self.actions = Actions()
        self.notifier = Notifier()

    def env(self) -> WorkflowTestEnv:
        return WorkflowTestEnv(PLUGIN, adapters=vars(self))


async def awaiting_approval(desk: Desk, amount: str = "20.00") -> tuple[WorkflowTestEnv, str]:
    env = desk.env()
    wf = await env.start({**REQUEST, "amount": amount})
    await env.run()
    assert await env.state(wf) == "AWAITING_APPROVAL"
    return env, wf


def approval(amount: str = "20.00") -> dict[str, Any]:
    return {"recommendation_version": 1, "amount": amount}


async def test_an_approved_refund_is_executed_once_and_the_customer_told() -> None:
    desk = Desk()
    env, wf = await awaiting_approval(desk)

    outcome = await env.send("APPROVED", approval(), workflow_id=wf, actor=APPROVER)
    await env.run()

    assert outcome.accepted
    assert await env.state(wf) == "COMPLETED"
    data = loose(await env.data(wf))
    assert data["classification"]["category"] == "billing"
    assert data["validation"]["passed"] is True
    assert data["action"]["reconciled"] is False
    assert [str(r.amount) for r in desk.actions.receipts.values()] == ["20.00"]
    assert list(desk.notifier.sent.values()) == [{"amount": "20.00", "currency": "EUR"}]
    assert [e.type for e in env.published] == ["APPROVAL_REQUESTED", "COMPLETED"]


async def test_an_approval_from_a_role_without_a_limit_is_refused() -> None:
    env, wf = await awaiting_approval(Desk())

    outcome = await env.send(
        "APPROVED", approval(), workflow_id=wf, actor=Actor(id="eve", role="viewer")
    )

    assert (outcome.accepted, outcome.reason) == (False, "guard_rejected")
    assert await env.state(wf) == "AWAITING_APPROVAL"
    assert "!role_allowed" in env.audit(wf)[-1].guard_results


async def test_an_approval_over_the_approvers_limit_is_refused_and_a_supervisor_may_approve() -> (
    None
):
    desk = Desk(amount="600.00")
    env, wf = await awaiting_approval(desk, amount="600.00")

    over = await env.send("APPROVED", approval("600.00"), workflow_id=wf, actor=APPROVER)
    within = await env.send("APPROVED", approval("600.00"), workflow_id=wf, actor=SUPERVISOR)
    await env.run()

    assert (over.accepted, within.accepted) == (False, True)
    refused = [a for a in env.audit(wf) if a.event_type == "APPROVED" and not a.accepted]
    assert "!amount_within_limit" in refused[0].guard_results
    assert await env.state(wf) == "COMPLETED"
    assert len(desk.actions.receipts) == 1


async def test_an_unavailable_account_api_is_retried_when_the_backoff_timer_fires() -> None:
    desk = Desk(accounts=Accounts(ExternalUnavailable("down")))
    env = desk.env()
    wf = await env.start(REQUEST)

    await env.run()
    assert desk.accounts.calls == 1
    assert await env.state(wf) == "GATHERING_EVIDENCE"
    await env.advance(600)

    assert desk.accounts.calls == 2
    assert await env.state(wf) == "AWAITING_APPROVAL"
    retried = [a for a in env.audit(wf) if a.event_type == "RETRYABLE_ERROR"]
    assert len(retried) == 1


async def test_an_approval_not_given_within_its_sla_goes_to_manual_review() -> None:
    desk = Desk()
    env, wf = await awaiting_approval(desk)

    await env.advance(DAY - 60)
    assert await env.state(wf) == "AWAITING_APPROVAL"
    await env.advance(120)

    assert await env.state(wf) == PLUGIN.definitions[-1].review_state
    assert env.audit(wf)[-1].event_type == "APPROVAL_EXPIRED"
    late = await env.send("APPROVED", approval(), workflow_id=wf, actor=APPROVER)
    assert not late.accepted
    assert desk.actions.receipts == {}


async def test_a_recommendation_over_policy_is_rejected_without_asking_anyone() -> None:
    desk = Desk(amount="20.00")
    desk.policies = Policies(max_amount="10.00")
    env = desk.env()
    wf = await env.start(REQUEST)

    await env.run()

    assert await env.state(wf) == "REJECTED"
    failed = [
        c["name"] for c in loose(await env.data(wf))["validation"]["checks"] if not c["passed"]
    ]
    assert failed == ["amount_within_policy"]
