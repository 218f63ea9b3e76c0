"""The finance and notifier simulators on their shared SQLite ledger: what one stage process
records, another sees; an invoice posts once whatever the number of callers; faults asked for
by the invoice number happen once across all of them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from interlock_invoice.ports import DEFAULT_SUPPLIERS, PlainTextExtractor
from interlock_invoice.simulator import Ledger, LedgerFinance, LedgerNotifier, fault_of

from interlock.errors import ExternalRejected, ExternalTimeout, ExternalUnavailable

pytestmark = pytest.mark.unit


def two_processes(tmp_path: Path) -> tuple[LedgerFinance, LedgerFinance]:
    """Two finance adapters on one ledger file, as two stage processes have them."""
    path = tmp_path / "finance.sqlite3"
    return (
        LedgerFinance(Ledger(path, DEFAULT_SUPPLIERS)),
        LedgerFinance(Ledger(path, DEFAULT_SUPPLIERS)),
    )


def test_fault_of_reads_the_mark_at_the_end_of_the_number() -> None:
    assert fault_of("AP-1~lose-response") == "lose-response"
    assert fault_of("AP-2026-0042") is None


async def test_a_posting_by_one_process_is_seen_by_another(tmp_path: Path) -> None:
    post, validate = two_processes(tmp_path)

    number = await post.post("wf-1", "Acme Paper GmbH", "AP-1", "53.55")

    assert await validate.posted_invoice("Acme Paper GmbH", "AP-1") == "wf-1"
    assert await validate.lookup("wf-1") == number
    assert await validate.supplier_known("Acme Paper GmbH")
    assert not await validate.supplier_known("Umbrella Holdings")


async def test_concurrent_postings_of_one_invoice_post_once(tmp_path: Path) -> None:
    a, b = two_processes(tmp_path)

    numbers = await asyncio.gather(
        *(f.post("wf-1", "Acme Paper GmbH", "AP-1", "1.00") for f in (a, b, a, b))
    )

    assert len(set(numbers)) == 1
    assert await a.ledger.count("postings", "wf-1") == 1
    assert await a.ledger.count("calls", "wf-1", "post") == 4


async def test_a_lost_response_posts_and_happens_once(tmp_path: Path) -> None:
    a, b = two_processes(tmp_path)

    with pytest.raises(ExternalTimeout):
        await a.post("wf-1", "Acme Paper GmbH", "AP-1~lose-response", "1.00")
    found = await b.lookup("wf-1")

    assert found is not None
    assert await b.post("wf-1", "Acme Paper GmbH", "AP-1~lose-response", "1.00") == found


async def test_a_timeout_before_posting_posts_nothing_and_happens_once(tmp_path: Path) -> None:
    a, b = two_processes(tmp_path)

    with pytest.raises(ExternalTimeout):
        await a.post("wf-1", "Acme Paper GmbH", "AP-1~timeout-once", "1.00")

    assert await b.lookup("wf-1") is None
    assert await b.post("wf-1", "Acme Paper GmbH", "AP-1~timeout-once", "1.00")
    assert await a.ledger.count("postings", "wf-1") == 1


async def test_a_posting_is_reversed_once_whatever_the_number_of_callers(tmp_path: Path) -> None:
    a, b = two_processes(tmp_path)
    number = await a.post("wf-1", "Acme Paper GmbH", "AP-1", "1.00")

    reversals = await asyncio.gather(*(f.reverse("wf-1", number) for f in (a, b, a)))

    assert len(set(reversals)) == 1
    assert reversals[0].startswith("REV-")
    assert await a.ledger.count("reversals", "wf-1") == 1


async def test_a_reversal_of_a_posting_not_held_is_refused(tmp_path: Path) -> None:
    a, _ = two_processes(tmp_path)
    number = await a.post("wf-1", "Acme Paper GmbH", "AP-1", "1.00")

    for invoice_id, posting in (("wf-2", number), ("wf-1", "FIN-999999")):
        with pytest.raises(ExternalRejected) as refused:
            await a.reverse(invoice_id, posting)
        assert refused.value.error_class == "posting_not_found"
    assert await a.ledger.count("reversals", "wf-1") == 0


async def test_lasting_faults_hold_until_healed(tmp_path: Path) -> None:
    a, b = two_processes(tmp_path)
    for _ in range(2):
        with pytest.raises(ExternalTimeout):
            await a.post("wf-1", "Acme Paper GmbH", "AP-1~unanswered", "1.00")
        with pytest.raises(ExternalTimeout):
            await a.post("wf-2", "Acme Paper GmbH", "AP-2~answers-lost", "1.00")
        with pytest.raises(ExternalTimeout):
            await b.lookup("wf-2")
    assert await b.lookup("wf-1") is None
    assert await a.ledger.count("postings", "wf-2") == 1

    await a.ledger.heal("AP-1~unanswered", "unanswered")
    await b.ledger.heal("AP-2~answers-lost", "answers-lost")

    assert await b.lookup("wf-2") == await a.post(
        "wf-2", "Acme Paper GmbH", "AP-2~answers-lost", "1"
    )
    assert await a.post("wf-1", "Acme Paper GmbH", "AP-1~unanswered", "1.00")


async def test_a_failing_notifier_never_touches_the_posting(tmp_path: Path) -> None:
    finance, _ = two_processes(tmp_path)
    notifier = LedgerNotifier(finance.ledger)
    number = await finance.post("wf-1", "Acme Paper GmbH", "AP-1~notify-fails", "1.00")
    await finance.post("wf-2", "Acme Paper GmbH", "AP-2", "1.00")

    with pytest.raises(ExternalUnavailable):
        await notifier.notify("wf-1", "Acme Paper GmbH", number)
    assert await notifier.notify("wf-2", "Acme Paper GmbH", "FIN-000002")

    assert await finance.lookup("wf-1") == number
    assert await finance.ledger.count("notifications", "wf-1") == 0
    assert await finance.ledger.count("notifications", "wf-2") == 1


async def test_the_extractor_misreads_when_the_number_asks_and_repairs_once() -> None:
    text = "Invoice number: X~invalid-output\nTotal: 1.00\n"
    always = "Invoice number: X~invalid-output-always\nTotal: 1.00\n"
    extractor = PlainTextExtractor()

    first = await extractor.extract(text)
    repaired = await extractor.extract(text, previous=first, problems="total: missing")

    assert '"total"' not in first
    assert '"total"' in repaired
    assert '"total"' not in await extractor.extract(always, previous=first, problems="x")
