"""An expense claim: classified by rules, checked against policy, approved above a threshold,
paid over HTTP under an idempotency key, the employee told; cancellable while it waits."""

from __future__ import annotations

from decimal import Decimal
from typing import cast

from pydantic import BaseModel

from interlock import (
    RERUN_EVENT,
    AdapterContext,
    Amount,
    Anything,
    Currency,
    KeyedEffects,
    Port,
    Result,
    ShortText,
    StageContext,
    Text,
    Typed,
    Workflow,
    actor_role_in,
    check,
    effect_is,
    execute_once,
    guard,
    stage,
)
from interlock.adapters.http import HttpEffectConfig, HttpEffects


class Claim(BaseModel):
    employee: ShortText
    description: Text
    amount: Amount
    currency: Currency = "EUR"


class Job(BaseModel):
    claim: Claim


class Classified(Result):
    __event__ = "CLASSIFIED"
    category: ShortText


class Paid(Result):
    __event__ = "PAYMENT_MADE"
    payment_id: ShortText
    idempotency_key: ShortText
    reconciled: bool


class Notified(Result):
    __event__ = "EMPLOYEE_NOTIFIED"
    notice_id: ShortText


class Receipt(BaseModel):
    id: str


class Order(BaseModel):
    """What the payment or notice service is asked to do, under the effect's key."""

    idempotency_key: str
    employee: str
    text: str
    amount: Decimal | None = None
    currency: str | None = None


def service(path: str) -> Port[KeyedEffects[Order, Receipt]]:
    """A port to the bank's `path` over HTTP; `INTERLOCK_ADAPTERS` may give its `base_url`."""

    def build(ctx: AdapterContext) -> HttpEffects[Order, Receipt]:
        config = {"base_url": "http://127.0.0.1:8098/", **ctx.config, "execute_path": path}
        config["lookup_path"] = path + "/{key}"
        return HttpEffects(HttpEffectConfig.model_validate(config), Receipt)

    return Port(path, default=build, protocol=KeyedEffects)


PAYMENTS, NOTICES = service("payments"), service("notices")
POLICY_LIMITS = {"meals": "150", "travel": "2500", "equipment": "3000", "other": "500"}
RULES = {
    "travel": ("flight", "train", "hotel", "taxi"),
    "meals": ("lunch", "dinner", "meal"),
    "equipment": ("laptop", "monitor", "keyboard"),
}


@stage("categorise", reads=Job, emits=(Classified,))
async def categorise(job: Job, ctx: StageContext) -> Classified:
    words = job.claim.description.lower()
    found = (c for c, keys in RULES.items() if any(k in words for k in keys))
    return Classified(category=next(found, "other"))


@stage("pay", reads=Job, emits=(Paid,), ports=(PAYMENTS,), effects=True, redeliver=True)
async def pay(job: Job, ctx: StageContext) -> Paid:
    c, key = job.claim, ctx.idempotency_key
    order = Order(idempotency_key=key, employee=c.employee, text=c.description, amount=c.amount)
    order.currency = c.currency
    receipt, reconciled = await execute_once(ctx.port(PAYMENTS), key, order)
    return Paid(payment_id=receipt.id, idempotency_key=key, reconciled=reconciled)


@stage("notify", reads=Job, emits=(Notified,), ports=(NOTICES,), redeliver=True)
async def notify(job: Job, ctx: StageContext) -> Notified:
    text = f"Your claim of {job.claim.amount} {job.claim.currency} was paid."
    order = Order(idempotency_key=ctx.idempotency_key, employee=job.claim.employee, text=text)
    receipt, _ = await execute_once(ctx.port(NOTICES), order.idempotency_key, order)
    return Notified(notice_id=receipt.id)


class Shown(BaseModel):
    claim: Claim


@guard(payload=Classified, data=Shown)
def within_policy(g: Typed[Classified, Shown]) -> bool:
    limits = cast("dict[str, str]", g.parameters["policy_limits"])
    return g.data.claim.amount <= Decimal(limits.get(g.payload.category, limits["other"]))


@guard(data=Shown)
def needs_approval(g: Typed[Anything, Shown]) -> bool:
    return g.data.claim.amount >= Decimal(str(g.parameters["approval_threshold"]))


shown = {"employee": "claim.employee", "amount": "claim.amount", "currency": "claim.currency"}
wf = Workflow("expense", description="Expense claim -> policy -> approval -> payment -> notice")
wf.settings(parameters={"approval_threshold": "100.00", "policy_limits": POLICY_LIMITS})
wf.request(Claim, into="claim")
wf.result(Classified, into="classification")
wf.result(Paid, into="payment", merge=True)
wf.result(Notified, into="notice")
wf.failures()
ENDS = ("PAID", "REJECTED", "CANCELLED")
wf.states(
    "RECEIVED", "CLASSIFYING", "PAYING", "NOTIFYING", *ENDS, terminal=ENDS, effects=("PAYING",)
)
wf.stage("CLASSIFYING", categorise, inputs=("claim",))
wf.stage("PAYING", pay, inputs=("claim",))
wf.stage("NOTIFYING", notify, inputs=("claim",))
wf.on("RECEIVED", "START", "CLASSIFYING")
policy = check("within_policy")
wf.on("CLASSIFYING", Classified, "AWAITING_APPROVAL", guards=(policy, check("needs_approval")))
wf.on("CLASSIFYING", Classified, "PAYING", guards=(policy,))
wf.on("CLASSIFYING", Classified, "REJECTED", reason="over_policy")
wf.approval(
    "AWAITING_APPROVAL",
    approved="PAYING",
    rejected="REJECTED",
    binds={"amount": "claim.amount"},
    shows={**shown, "category": "classification.category"},
    limits={"manager": "1000.00", "finance_director": "25000.00"},
    expires=72 * 3600.0,
    escalate_to="ESCALATED",
)
wf.on("PAYING", Paid, "NOTIFYING")
wf.on("NOTIFYING", Notified, "PAID")
wf.effect("PAYING", committed=(Paid,))
wf.effect("NOTIFYING", committed=(Notified,), unknown=(), gated=False)
wf.gate("PAYING", "CLASSIFIED", "APPROVED", any_of=True)
wf.terminal("PAID", effects="done", requires=("PAYING", "NOTIFYING"))
wf.terminal("REJECTED", effects="none")
wf.cancellation(
    "CANCELLED",
    before=("RECEIVED", "CLASSIFYING", "AWAITING_APPROVAL", "ESCALATED"),
    during=("PAYING",),
)
wf.operator_review(
    "REVIEW", resumable=("CLASSIFYING", "NOTIFYING"), cancel="CANCELLED", reject="REJECTED"
)
for state in ("CLASSIFYING", "PAYING", "NOTIFYING"):
    wf.on(state, "PERMANENT_ERROR", "REVIEW", reason=f"{state.lower()}_failed")
    wf.on(state, "ESCALATE", "REVIEW", reason="escalated")
operator, unknown = actor_role_in("operator_roles"), effect_is("PAYING", "unknown")
wf.signal(RERUN_EVENT).on("REVIEW", RERUN_EVENT, "PAYING", guards=(operator, unknown))
outcomes = {"PAID": "completed", "REJECTED": "rejected", "CANCELLED": "cancelled"}
wf.announce_each({**outcomes, "REVIEW": "manual_review"}, fields=shown)
DEFINITION = wf.build()
