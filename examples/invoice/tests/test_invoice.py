"""The invoice pipeline's paths, in-process (`interlock.testing`): the real engine and
projector, the plugin's stages, an in-memory finance system and a clock the test moves."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from interlock_invoice import PLUGIN
from interlock_invoice.document import render, request_for
from interlock_invoice.ports import InMemoryFinance, InMemoryNotifier, PlainTextExtractor

from interlock.contracts.envelope import Actor
from interlock.errors import ExternalUnavailable
from interlock.testing import WorkflowTestEnv

APPROVER = Actor(id="ada", role="invoice_approver")
CLERK = Actor(id="bob", role="clerk")
OPERATOR = Actor(id="ops", role="operator")


def invoice(**changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "supplier": "Acme Paper GmbH",
        "invoice_number": "AP-2026-0042",
        "invoice_date": "2026-11-02",
        "currency": "EUR",
        "items": [
            {"description": "Copy paper A4", "quantity": "10", "unit_price": "4.50"},
            {"description": "Toner cartridge", "quantity": "2", "unit_price": "39.90"},
        ],
        "net": "124.80",
        "tax": "23.71",
        "total": "148.51",
    }
    return {**fields, **changes}


LARGE = invoice(
    items=[{"description": "Server", "quantity": "1", "unit_price": "2000.00"}],
    net="2000.00",
    tax="380.00",
    total="2380.00",
)


class Env:
    def __init__(self, extractor: Any = None, **parameters: Any) -> None:
        self.finance = InMemoryFinance()
        self.notifier = InMemoryNotifier()
        self.env = WorkflowTestEnv(
            PLUGIN,
            adapters={
                "extractor": extractor or PlainTextExtractor(),
                "finance": self.finance,
                "notifier": self.notifier,
            },
            parameters=parameters,
        )

    async def submit(self, fields: dict[str, Any], **kw: Any) -> str:
        wf = await self.env.start(request_for(render(fields)), **kw)
        await self.env.run()
        return wf

    async def state(self, wf: str) -> str:
        return await self.env.state(wf)

    async def data(self, wf: str) -> dict[str, Any]:
        return await self.env.data(wf)

    def reasons(self, wf: str) -> list[str | None]:
        """The audit's reasons and details (an accepted pause records it as its detail)."""
        return [r for a in self.env.audit(wf) for r in (a.reason, a.detail)]


async def test_happy_path_posts_once_then_notifies() -> None:
    t = Env()
    wf = await t.submit(invoice())
    assert await t.state(wf) == "POSTED"
    data = await t.data(wf)
    assert data["posting_number"] == "FIN-000001"
    digest = hashlib.sha256(render(invoice()).encode()).hexdigest()
    assert data["document_sha256"] == digest
    assert data["extraction"]["verdict"] == "valid"
    assert t.finance.post_calls == 1
    assert len(t.finance.ledger) == 1
    assert t.notifier.sent == [(wf, "FIN-000001")]


async def test_same_file_twice_is_one_workflow_and_an_audited_replay() -> None:
    t = Env()
    first = await t.submit(invoice())
    again = await t.env.start(request_for(render(invoice()), filename="copy.txt"))
    assert again == first
    assert "idempotent_replay" in t.reasons(first)
    assert len(t.finance.ledger) == 1


async def test_other_tenant_or_other_bytes_is_another_workflow() -> None:
    t = Env()
    first = await t.submit(invoice())
    other = await t.submit(invoice(invoice_number="AP-2026-0043"))
    assert other != first


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        (invoice(net="124.00", tax="24.51"), "totals_mismatch"),
        (invoice(total="148.52"), "totals_mismatch"),
        (invoice(supplier="Umbrella Corp"), "unknown_supplier"),
    ],
)
async def test_validation_failures_pause_in_manual_review(
    fields: dict[str, Any], reason: str
) -> None:
    t = Env()
    wf = await t.submit(fields)
    assert await t.state(wf) == "MANUAL_REVIEW"
    assert (await t.data(wf))["review_reason"] == reason
    assert reason in t.reasons(wf)
    assert t.finance.post_calls == 0


async def test_duplicate_invoice_number_of_a_posted_invoice() -> None:
    t = Env()
    await t.submit(invoice())
    # the same supplier and number in another file (a changed date: other bytes)
    wf = await t.submit(invoice(invoice_date="2026-11-03"))
    assert await t.state(wf) == "MANUAL_REVIEW"
    assert (await t.data(wf))["review_reason"] == "duplicate_invoice"
    assert len(t.finance.ledger) == 1


class Flaky:
    """An extractor whose first answer breaks the schema; the repair is right."""

    name = "flaky/1"

    def __init__(self, bad_answers: int) -> None:
        self.bad = bad_answers
        self.calls: list[str | None] = []

    async def extract(
        self, text: str, *, previous: str | None = None, problems: str | None = None
    ) -> str:
        self.calls.append(problems)
        if self.bad > 0:
            self.bad -= 1
            return '{"supplier": "Acme Paper GmbH"}'
        return await PlainTextExtractor().extract(text)


async def test_schema_invalid_output_is_repaired_once() -> None:
    extractor = Flaky(bad_answers=1)
    t = Env(extractor)
    wf = await t.submit(invoice())
    assert await t.state(wf) == "POSTED"
    assert (await t.data(wf))["extraction"]["verdict"] == "repaired"
    assert extractor.calls[0] is None
    assert extractor.calls[1]


async def test_extraction_failed_after_the_repair() -> None:
    t = Env(Flaky(bad_answers=2))
    wf = await t.submit(invoice())
    assert await t.state(wf) == "MANUAL_REVIEW"
    data = await t.data(wf)
    assert data["review_reason"] == "extraction_failed"
    assert data["document_sha256"]
    assert data["extraction"]["verdict"] == "invalid"
    assert "extraction_failed" in t.reasons(wf)


async def test_high_amount_waits_for_approval_then_posts() -> None:
    t = Env()
    wf = await t.submit(LARGE)
    assert await t.state(wf) == "AWAITING_APPROVAL"
    task = next(e for e in t.env.published if e.type == "APPROVAL_REQUESTED")
    assert task.payload["total"] == "2380.00"
    assert task.payload["supplier"] == "Acme Paper GmbH"
    assert task.payload["workflow_id"] == wf
    assert task.payload["expires_at"]
    refused = await t.env.send("APPROVED", {"total": "2380.00"}, workflow_id=wf, actor=CLERK)
    assert not refused.accepted
    wrong = await t.env.send("APPROVED", {"total": "2300.00"}, workflow_id=wf, actor=APPROVER)
    assert not wrong.accepted
    ok = await t.env.send("APPROVED", {"total": "2380.00"}, workflow_id=wf, actor=APPROVER)
    assert ok.accepted
    await t.env.run()
    assert await t.state(wf) == "POSTED"


async def test_threshold_is_a_parameter() -> None:
    t = Env(approval_threshold="100.00")
    wf = await t.submit(invoice())
    assert await t.state(wf) == "AWAITING_APPROVAL"


async def test_high_amount_rejected() -> None:
    t = Env()
    wf = await t.submit(LARGE)
    out = await t.env.send(
        "REJECTED_BY_REVIEWER", {"reason": "no PO"}, workflow_id=wf, actor=APPROVER
    )
    assert out.accepted
    assert await t.state(wf) == "REJECTED"
    assert t.finance.post_calls == 0


async def test_approval_sla_escalates_and_never_approves() -> None:
    t = Env()
    wf = await t.submit(LARGE)
    await t.env.advance(48 * 3600 + 1)
    assert await t.state(wf) == "APPROVAL_ESCALATED"
    assert any(e.type == "APPROVAL_ESCALATED" for e in t.env.published)
    await t.env.advance(30 * 24 * 3600)
    assert await t.state(wf) == "APPROVAL_ESCALATED"
    assert t.finance.post_calls == 0
    ok = await t.env.send("APPROVED", {"total": "2380.00"}, workflow_id=wf, actor=APPROVER)
    assert ok.accepted
    await t.env.run()
    assert await t.state(wf) == "POSTED"


async def test_lost_posting_response_is_reconciled_by_lookup_one_posting() -> None:
    t = Env()
    t.finance.lose_responses = 1
    wf = await t.submit(invoice())
    assert await t.state(wf) == "POSTED"
    data = await t.data(wf)
    assert data["posting_reconciled"] is True
    assert data["posting_number"] == "FIN-000001"
    assert t.finance.post_calls == 1
    assert len(t.finance.ledger) == 1


async def test_posting_timed_out_and_not_posted_is_retried_once() -> None:
    t = Env()
    t.finance.time_out = 1
    wf = await t.submit(invoice())
    assert await t.state(wf) == "POSTING"  # waiting for the retry's backoff timer
    await t.env.advance(60)
    assert await t.state(wf) == "POSTED"
    assert t.finance.post_calls == 2
    assert len(t.finance.ledger) == 1


async def test_posting_never_confirmed_pauses() -> None:
    t = Env()
    t.finance.time_out = 10
    wf = await t.submit(invoice())
    for _ in range(5):
        await t.env.advance(600)
    assert await t.state(wf) == "MANUAL_REVIEW"
    assert (await t.data(wf))["review_reason"] == "posting_unconfirmed"
    assert "posting_unconfirmed" in t.reasons(wf)
    assert t.finance.post_calls == 3
    assert not t.finance.ledger


async def test_notification_failure_keeps_the_posting() -> None:
    t = Env()
    t.notifier.failures = [ExternalUnavailable("mail down")]
    wf = await t.submit(invoice())
    assert await t.state(wf) == "NOTIFYING"
    await t.env.advance(60)
    assert await t.state(wf) == "POSTED"
    assert t.finance.post_calls == 1
    assert len(t.finance.ledger) == 1


async def test_cancel_while_awaiting_approval() -> None:
    t = Env()
    wf = await t.submit(LARGE)
    out = await t.env.send(
        "CANCEL_REQUESTED", {"reason": "withdrawn"}, workflow_id=wf, actor=OPERATOR
    )
    assert out.accepted
    assert await t.state(wf) == "CANCELLED"
    assert t.env.armed_timers(wf) == []


async def test_a_repaired_extraction_keeps_both_attempts_as_model_calls() -> None:
    t = Env(Flaky(bad_answers=1))
    wf = await t.submit(invoice())
    execution = (await t.env.workflow(wf)).execution
    first, second = execution.model_calls
    assert (first.task, first.attempt, first.verdict) == ("extract", 1, "invalid")
    assert first.errors  # the schema problems, field paths and kinds only
    assert first.output == {"supplier": "Acme Paper GmbH"}  # the invalid answer is kept
    assert (second.attempt, second.verdict) == (2, "repaired")
    assert first.input_digest == second.input_digest == (await t.data(wf))["document_sha256"]
    assert (await t.data(wf))["model_calls_accepted"] == {"extracted": 2}


async def test_a_failed_extraction_records_both_invalid_attempts() -> None:
    t = Env(Flaky(bad_answers=2))
    wf = await t.submit(invoice())
    calls = (await t.env.workflow(wf)).execution.model_calls
    assert [c.verdict for c in calls] == ["invalid", "invalid"]
    assert "model_calls_accepted" not in await t.data(wf)
