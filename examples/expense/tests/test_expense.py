"""The expense claim's paths, in-process (`interlock.testing`): the real engine and projector,
the plugin's stages, an in-memory bank and a clock the test moves."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from interlock_expense import PLUGIN
from interlock_expense.workflow import Order, Receipt

from interlock import RERUN_EVENT, Actor
from interlock.errors import ExternalUnavailable
from interlock.testing import WorkflowTestEnv

MANAGER = Actor(id="mia", role="manager")
DIRECTOR = Actor(id="dan", role="finance_director")
CLERK = Actor(id="cal", role="clerk")


@dataclass
class FakeService:
    """Deduplicates by key like the bank; `unavailable` answers that many calls 503-like."""

    made: dict[str, Order] = field(default_factory=dict)
    unavailable: int = 0
    calls: int = 0

    async def execute(self, request: Order) -> Receipt:
        self.calls += 1
        if self.unavailable > 0:
            self.unavailable -= 1
            raise ExternalUnavailable("bank answered HTTP 503")
        self.made.setdefault(request.idempotency_key, request)
        return Receipt(id=f"P-{len(self.made)}")

    async def lookup(self, idempotency_key: str) -> Receipt | None:
        return Receipt(id="P-1") if idempotency_key in self.made else None


class Env:
    def __init__(self, **parameters: Any) -> None:
        self.payments, self.notices = FakeService(), FakeService()
        adapters = {"payments": self.payments, "notices": self.notices}
        self.env = WorkflowTestEnv(PLUGIN, adapters=adapters, parameters=parameters)

    async def claim(self, description: str, amount: str) -> str:
        wf = await self.env.start({"employee": "ada", "description": description, "amount": amount})
        await self.env.run()
        return wf

    async def signal(self, wf: str, event: str, actor: Actor, **payload: Any) -> Any:
        outcome = await self.env.send(event, payload, workflow_id=wf, actor=actor)
        await self.env.run()
        return outcome

    def guards(self, wf: str) -> tuple[str, ...]:
        """The guard labels of the workflow's last decided event."""
        return self.env.audit(wf)[-1].guard_results

    def announced(self, name: str) -> list[dict[str, Any]]:
        return [e.payload for e in self.env.published if e.type == name.upper()]


async def test_small_claim_is_paid_once_and_the_employee_told() -> None:
    t = Env()
    wf = await t.claim("Team lunch", "42.50")
    assert await t.env.state(wf) == "PAID"
    assert (await t.env.data(wf))["classification"] == {"category": "meals"}
    assert len(t.payments.made) == 1
    assert len(t.notices.made) == 1
    assert t.announced("completed")[0]["amount"] == "42.50"


async def test_claim_over_the_category_policy_is_rejected_unpaid() -> None:
    t = Env()
    wf = await t.claim("Dinner with the whole department", "400.00")
    assert await t.env.state(wf) == "REJECTED"
    assert "over_policy" in [a.detail for a in t.env.audit(wf)] + [
        a.reason for a in t.env.audit(wf)
    ]
    assert t.payments.made == {}


async def test_claim_above_the_threshold_waits_and_is_paid_after_approval() -> None:
    t = Env()
    wf = await t.claim("Train to Berlin", "800.00")
    assert await t.env.state(wf) == "AWAITING_APPROVAL"
    task = t.announced("approval_requested")[0]
    assert (task["amount"], task["category"], task["employee"]) == ("800.00", "travel", "ada")
    assert "expires_at" in task
    outcome = await t.signal(wf, "APPROVED", MANAGER, amount="800.0")  # the same, as decimals
    assert outcome.accepted
    assert await t.env.state(wf) == "PAID"
    assert len(t.payments.made) == 1


async def test_approval_binds_to_the_amount_shown_and_the_roles_limit() -> None:
    t = Env()
    wf = await t.claim("Hotel for the conference", "1500.00")
    assert not (await t.signal(wf, "APPROVED", DIRECTOR, amount="15.00")).accepted
    assert "!amount_matches_shown" in t.guards(wf)
    await t.signal(wf, "APPROVED", MANAGER, amount="1500.00")
    assert "!amount_within_limit" in t.guards(wf)
    await t.signal(wf, "APPROVED", CLERK, amount="1500.00")
    assert "!role_allowed" in t.guards(wf)
    assert await t.env.state(wf) == "AWAITING_APPROVAL"
    assert (await t.signal(wf, "APPROVED", DIRECTOR, amount="1500.00")).accepted
    assert await t.env.state(wf) == "PAID"


async def test_threshold_is_a_parameter() -> None:
    t = Env(approval_threshold="1000.00")
    wf = await t.claim("Train to Berlin", "800.00")
    assert await t.env.state(wf) == "PAID"


async def test_rejected_by_an_approver_and_never_by_anyone_else() -> None:
    t = Env()
    wf = await t.claim("New laptop", "1200.00")
    assert not (await t.signal(wf, "REJECTED_BY_REVIEWER", CLERK)).accepted
    assert (await t.signal(wf, "REJECTED_BY_REVIEWER", MANAGER, reason="not budgeted")).accepted
    assert await t.env.state(wf) == "REJECTED"
    assert t.payments.calls == 0


async def test_cancelled_while_awaiting_approval_pays_nothing() -> None:
    t = Env()
    wf = await t.claim("Taxi to the airport", "120.00")
    assert (await t.signal(wf, "CANCEL_REQUESTED", CLERK, reason="claimed twice")).accepted
    assert await t.env.state(wf) == "CANCELLED"
    assert t.announced("cancelled")
    assert t.payments.calls == 0


async def test_a_503_is_retried_and_pays_exactly_once() -> None:
    t = Env()
    t.payments.unavailable = 1
    wf = await t.claim("Team lunch", "42.50")
    assert await t.env.state(wf) == "PAID"
    assert t.payments.calls == 2
    assert len(t.payments.made) == 1
    show = (await t.env.workflow(wf)).execution.effects["PAYING"]
    assert show.status == "committed"
    assert show.idempotency_key == next(iter(t.payments.made))


async def test_an_expired_approval_escalates_and_is_still_decided_by_a_person() -> None:
    t = Env()
    wf = await t.claim("Train to Berlin", "800.00")
    await t.env.advance(72 * 3600.0 + 1)
    assert await t.env.state(wf) == "ESCALATED"
    assert t.announced("approval_escalated")
    assert (await t.signal(wf, "APPROVED", MANAGER, amount="800.00")).accepted
    assert await t.env.state(wf) == "PAID"


async def test_a_bank_that_never_answers_pauses_in_review_until_an_operator_reruns() -> None:
    t = Env()
    t.payments.unavailable = 100
    wf = await t.claim("Team lunch", "42.50")
    assert await t.env.state(wf) == "REVIEW"
    assert t.payments.made == {}
    operator = Actor(id="ops", role="operator")
    # nobody knows yet whether the bank paid: the claim may not end as if nothing was
    assert not (await t.signal(wf, "CANCEL_REQUESTED", operator)).accepted
    assert "!effect_all_none" in t.guards(wf)
    t.payments.unavailable = 0
    assert (await t.signal(wf, RERUN_EVENT, operator)).accepted
    assert await t.env.state(wf) == "PAID"
    assert len(t.payments.made) == 1
