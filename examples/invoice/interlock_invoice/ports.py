"""The outside systems the invoice stages call: the extractor (the model node), the finance
system (suppliers, ledger, postings) and the notifier. The defaults are the deterministic
extractor and the simulators on the installation's shared ledger (`simulator`); the in-memory
ones are for in-process tests.

A finance adapter raises `ExternalTimeout` when a posting's outcome is unknown (the request
went out, no answer came back), `ExternalUnavailable` when nothing was sent and
`ExternalRejected` when the finance system refused the posting (or a reversal of a posting it
does not hold under the key).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from interlock import AdapterContext, Port
from interlock.errors import ExternalRejected, ExternalTimeout
from interlock_invoice.document import as_json, parse_plain_text
from interlock_invoice.simulator import LedgerFinance, LedgerNotifier, fault_of, ledger_of

DEFAULT_SUPPLIERS = ("Acme Paper GmbH", "Globex Logistics Ltd", "Initech Software Inc")


class Extractor(Protocol):
    """Turns a document's text into the invoice schema's JSON (the model's raw output).
    Given `previous` and `problems`, it is asked to repair its earlier output."""

    name: str

    async def extract(
        self, text: str, *, previous: str | None = None, problems: str | None = None
    ) -> str: ...


class PlainTextExtractor:
    """The deterministic default: reads the contract's plain-text format. Asked to repair,
    it reads the document again and gives the same answer.

    It also plays a model that misreads, when the invoice number asks for it (as the
    simulators' faults, `simulator.fault_of`): ``~invalid-output`` gives an answer without
    its total first, then repairs it; ``~invalid-output-always`` never answers validly."""

    name = "plain-text/1"

    async def extract(
        self, text: str, *, previous: str | None = None, problems: str | None = None
    ) -> str:
        fields = parse_plain_text(text)
        fault = fault_of(str(fields.get("invoice_number", "")))
        if fault == "invalid-output-always" or (fault == "invalid-output" and previous is None):
            fields.pop("total", None)
        return as_json(fields)


@dataclass(frozen=True)
class Posting:
    invoice_id: str
    supplier: str
    invoice_number: str
    posting_number: str


class Finance(Protocol):
    async def supplier_known(self, supplier: str) -> bool: ...

    async def posted_invoice(self, supplier: str, invoice_number: str) -> str | None:
        """The `invoice_id` under which this supplier's invoice number was posted, if any."""
        ...

    async def lookup(self, invoice_id: str) -> str | None:
        """The posting number of `invoice_id`, or None if it was never posted."""
        ...

    async def post(self, invoice_id: str, supplier: str, invoice_number: str, total: str) -> str:
        """Post once per `invoice_id` (the idempotency key): posting it again answers the
        first posting's number."""
        ...

    async def reverse(self, invoice_id: str, posting_number: str) -> str:
        """Reverse the posting `posting_number` of `invoice_id` once: reversing it again
        answers the first reversal's number; `ExternalRejected` if no such posting is held."""
        ...


@dataclass
class InMemoryFinance:
    """A finance system with its own ledger, for tests and the demo. Fault injection:
    `lose_responses` posts but loses the answer; `time_out` loses the request before it
    posts; `lookups_time_out` leaves lookups unanswered (each counts down per call)."""

    suppliers: set[str] = field(default_factory=lambda: set(DEFAULT_SUPPLIERS))
    ledger: dict[str, Posting] = field(default_factory=dict)
    lose_responses: int = 0
    time_out: int = 0
    lookups_time_out: int = 0
    reversals: dict[str, str] = field(default_factory=dict)
    post_calls: int = 0
    lookups: int = 0
    _numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def supplier_known(self, supplier: str) -> bool:
        return supplier in self.suppliers

    async def posted_invoice(self, supplier: str, invoice_number: str) -> str | None:
        return next(
            (
                p.invoice_id
                for p in self.ledger.values()
                if (p.supplier, p.invoice_number) == (supplier, invoice_number)
            ),
            None,
        )

    async def lookup(self, invoice_id: str) -> str | None:
        self.lookups += 1
        if self.lookups_time_out > 0:
            self.lookups_time_out -= 1
            raise ExternalTimeout("finance system: lookup unanswered")
        posting = self.ledger.get(invoice_id)
        return None if posting is None else posting.posting_number

    async def post(self, invoice_id: str, supplier: str, invoice_number: str, total: str) -> str:
        self.post_calls += 1
        if self.time_out > 0:
            self.time_out -= 1
            raise ExternalTimeout("finance system: no answer, request not received")
        posting = self.ledger.get(invoice_id)
        if posting is None:
            number = f"FIN-{next(self._numbers):06d}"
            posting = Posting(invoice_id, supplier, invoice_number, number)
            self.ledger[invoice_id] = posting
        if self.lose_responses > 0:
            self.lose_responses -= 1
            raise ExternalTimeout("finance system: posted, answer lost")
        return posting.posting_number

    async def reverse(self, invoice_id: str, posting_number: str) -> str:
        posting = self.ledger.get(invoice_id)
        if posting is None or posting.posting_number != posting_number:
            raise ExternalRejected(
                "finance system: no such posting", error_class="posting_not_found"
            )
        return self.reversals.setdefault(invoice_id, f"REV-{len(self.reversals) + 1:06d}")

    def postings(self) -> Iterable[Posting]:
        return self.ledger.values()


class Notifier(Protocol):
    async def notify(self, invoice_id: str, supplier: str, posting_number: str) -> str:
        """Tell the accounts-payable team; the answer is the notification's id."""
        ...


@dataclass
class InMemoryNotifier:
    failures: list[Exception] = field(default_factory=list)
    sent: list[tuple[str, str]] = field(default_factory=list)

    async def notify(self, invoice_id: str, supplier: str, posting_number: str) -> str:
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append((invoice_id, posting_number))
        return f"note-{len(self.sent)}"


def default_finance(ctx: AdapterContext) -> Finance:
    return LedgerFinance(ledger_of(ctx, DEFAULT_SUPPLIERS))


def default_notifier(ctx: AdapterContext) -> Notifier:
    return LedgerNotifier(ledger_of(ctx, DEFAULT_SUPPLIERS))


EXTRACTOR: Port[Extractor] = Port(
    "extractor", default=lambda ctx: PlainTextExtractor(), protocol=Extractor
)
FINANCE: Port[Finance] = Port("finance", default=default_finance, protocol=Finance)
NOTIFIER: Port[Notifier] = Port("notifier", default=default_notifier, protocol=Notifier)
