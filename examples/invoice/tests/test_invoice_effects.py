"""The posting as an effect (definition version 2): an unconfirmed posting is recovered by an
operator — the number found in the ledger confirmed, or posted again under the same key — and
nothing posted is ever cancelled or rejected."""

from __future__ import annotations

from test_invoice import OPERATOR, Env, invoice

from interlock import CONFIRM_EVENT, RERUN_EVENT


async def _unconfirmed(t: Env) -> str:
    t.finance.time_out = 10
    wf = await t.submit(invoice())
    for _ in range(5):
        await t.env.advance(600)
    assert await t.state(wf) == "MANUAL_REVIEW"
    return wf


async def test_new_invoices_run_the_version_that_declares_the_posting() -> None:
    t = Env()
    wf = await t.submit(invoice())
    assert await t.state(wf) == "POSTED"
    assert (await t.env.store.load(t.env.tenant_id, wf)).workflow.definition_version == 3


async def test_an_unconfirmed_posting_is_confirmed_with_the_number_found_in_the_ledger() -> None:
    t = Env()
    wf = await _unconfirmed(t)
    found = {"invoice_id": "inv-1", "posting_number": "FIN-777", "posting_reconciled": True}

    out = await t.env.send(CONFIRM_EVENT, found, workflow_id=wf, actor=OPERATOR)
    await t.env.run()

    assert out.accepted
    assert await t.state(wf) == "POSTED"
    assert (await t.data(wf))["posting_number"] == "FIN-777"
    assert not t.finance.ledger  # confirming records what is there; it posts nothing


async def test_an_unconfirmed_posting_is_posted_again_under_the_same_key() -> None:
    t = Env()
    wf = await _unconfirmed(t)
    t.finance.time_out = 0

    out = await t.env.send(RERUN_EVENT, {}, workflow_id=wf, actor=OPERATOR)
    await t.env.run()

    assert out.accepted
    assert await t.state(wf) == "POSTED"
    assert len(t.finance.ledger) == 1


async def test_an_unconfirmed_posting_cannot_be_cancelled_or_rejected() -> None:
    t = Env()
    wf = await _unconfirmed(t)

    cancel = await t.env.send("CANCEL_REQUESTED", {"reason": "x"}, workflow_id=wf, actor=OPERATOR)
    reject = await t.env.send(
        "REJECTED_BY_REVIEWER", {"reason": "x"}, workflow_id=wf, actor=OPERATOR
    )

    assert (cancel.accepted, cancel.reason) == (False, "guard_rejected")
    assert (reject.accepted, reject.reason) == (False, "guard_rejected")
    assert await t.state(wf) == "MANUAL_REVIEW"
