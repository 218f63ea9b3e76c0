"""The posting's compensation (definition version 3): a posting that stands, or may stand, is
reversed on an operator's word (found by its key first when its outcome is unknown), and a
cancellation that comes after the posting reverses it; either way the invoice ends `REVERSED`,
whose promise — every effect reversed — the graph check proves for every path."""

from __future__ import annotations

from interlock_invoice import PLUGIN
from interlock_invoice.stages import NOTHING_TO_REVERSE
from test_invoice import OPERATOR, Env, invoice

from interlock import COMPENSATE_EVENT
from interlock.contracts.effectcheck import counterexamples, facts_by_state


async def _in_review(t: Env) -> str:
    wf = await t.submit(invoice())
    for _ in range(5):
        await t.env.advance(600)
    assert await t.state(wf) == "MANUAL_REVIEW"
    return wf


async def _compensate(t: Env, wf: str) -> bool:
    out = await t.env.send(COMPENSATE_EVENT, {"note": "x"}, workflow_id=wf, actor=OPERATOR)
    await t.env.run()
    return out.accepted


async def _posting(t: Env, wf: str) -> dict[str, object]:
    record = await t.env.store.load(t.env.tenant_id, wf)
    return dict(record.workflow.execution.effects["POSTING"].model_dump())


def test_every_version_keeps_its_promises_and_reversed_means_compensated() -> None:
    assert [counterexamples(d) for d in PLUGIN.definitions] == [[], [], []]
    latest = PLUGIN.definitions[-1]
    assert {t.state: t.effects for t in latest.terminals}["REVERSED"] == "reversed"
    assert facts_by_state(latest)["REVERSED"]["POSTING"] == ["compensated"]


async def test_a_posting_whose_answers_were_lost_is_found_by_its_key_and_reversed_once() -> None:
    t = Env()
    t.finance.lose_responses, t.finance.lookups_time_out = 10, 100
    wf = await _in_review(t)
    assert (await _posting(t, wf))["status"] == "unknown"
    assert (await _posting(t, wf))["idempotency_key"] == wf
    t.finance.lookups_time_out = 0  # the finance system answers again

    assert await _compensate(t, wf)

    assert await t.state(wf) == "REVERSED"
    assert len(t.finance.ledger) == 1
    assert list(t.finance.reversals) == [wf]
    assert (await t.data(wf))["reversal_number"] == t.finance.reversals[wf]
    assert (await _posting(t, wf))["status"] == "compensated"
    assert not t.notifier.sent


async def test_an_unknown_posting_with_nothing_under_its_key_has_nothing_to_reverse() -> None:
    t = Env()
    t.finance.time_out = 10
    wf = await _in_review(t)

    assert await _compensate(t, wf)

    assert await t.state(wf) == "REVERSED"
    assert (await t.data(wf))["reversal_number"] == NOTHING_TO_REVERSE
    assert not t.finance.ledger
    assert not t.finance.reversals


async def test_a_cancellation_while_posting_reverses_the_posting_once_it_stands() -> None:
    t = Env()
    t.finance.time_out = 1
    wf = await t.submit(invoice())
    assert await t.state(wf) == "POSTING"  # waiting for the retry's backoff
    cancel = await t.env.send("CANCEL_REQUESTED", {"reason": "x"}, workflow_id=wf, actor=OPERATOR)
    await t.env.advance(60)

    assert cancel.accepted
    assert await t.state(wf) == "REVERSED"
    assert list(t.finance.reversals) == [wf]
    assert "cancelled_after_effect" in t.reasons(wf)
    assert not t.notifier.sent


async def test_a_cancellation_in_review_after_the_posting_reverses_it() -> None:
    t = Env()
    t.notifier.failures = [ValueError("template broken")]
    wf = await t.submit(invoice())
    assert await t.state(wf) == "MANUAL_REVIEW"

    cancel = await t.env.send("CANCEL_REQUESTED", {"reason": "x"}, workflow_id=wf, actor=OPERATOR)
    await t.env.run()

    assert cancel.accepted
    assert await t.state(wf) == "REVERSED"
    assert list(t.finance.reversals) == [wf]


async def test_a_reversal_the_finance_system_refuses_pauses_for_review() -> None:
    t = Env()
    t.notifier.failures = [ValueError("template broken")]
    wf = await t.submit(invoice())
    t.finance.ledger.clear()  # the posting vanished from the ledger

    assert await _compensate(t, wf)

    assert await t.state(wf) == "MANUAL_REVIEW"
    assert (await t.data(wf))["review_reason"] == "reversal_failed"
    assert (await _posting(t, wf))["status"] == "committed"


async def test_nothing_posted_is_not_compensated() -> None:
    t = Env()
    wf = await t.submit(invoice(total="1.00"))  # totals mismatch: review before posting
    assert await t.state(wf) == "MANUAL_REVIEW"

    out = await t.env.send(COMPENSATE_EVENT, {}, workflow_id=wf, actor=OPERATOR)

    assert (out.accepted, out.reason) == (False, "guard_rejected")
    assert await t.state(wf) == "MANUAL_REVIEW"
