"""The invoice stages: extract (the model node), validate (deterministic), post (the effect,
reconciled by lookup), notify (after the posting number is confirmed), reverse (the posting's
compensation, looked up by its key first when its outcome is unknown)."""

from __future__ import annotations

import json
import time

from pydantic import BaseModel, ValidationError

from interlock import ModelCall, StageContext, stage
from interlock.errors import ExternalRejected, ExternalTimeout
from interlock_invoice.document import SCHEMA_VERSION, Invoice, InvoiceRequest, decoded
from interlock_invoice.document import sha256_of as digest
from interlock_invoice.ports import EXTRACTOR, FINANCE, NOTIFIER, Finance
from interlock_invoice.results import (
    DuplicateInvoice,
    Extracted,
    ExtractionFailed,
    ExtractionRecord,
    Notified,
    Posted,
    PostingReversed,
    PostingUnconfirmed,
    ReversalFailed,
    TotalsMismatch,
    UnknownSupplier,
    Valid,
    cents,
)

POST_ATTEMPTS = 3
"""Posting attempts whose outcome stayed unknown before the workflow pauses for a person."""
NOTHING_TO_REVERSE = "none-found-by-key"


class ExtractInputs(BaseModel):
    request: InvoiceRequest


def _problems(error: ValidationError) -> str:
    # field paths and error kinds only: the document's values stay out of the record
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['type']}" for e in error.errors())[:500]


@stage("extract", reads=ExtractInputs, emits=(Extracted, ExtractionFailed), ports=(EXTRACTOR,))
async def extract(job: ExtractInputs, ctx: StageContext) -> Extracted | ExtractionFailed:
    content = job.request.document.content_b64
    sha256, raw = digest(content), decoded(content)
    extractor = ctx.port(EXTRACTOR)

    calls: list[ModelCall] = []

    def failed(problems: str, attempts: int) -> ExtractionFailed:
        record = ExtractionRecord(
            extractor=extractor.name,
            schema_version=SCHEMA_VERSION,
            attempts=attempts,
            verdict="invalid",
            problems=problems,
        )
        return ExtractionFailed(document_sha256=sha256, extraction=record, calls=tuple(calls))

    try:
        text = (raw or b"").decode("utf-8")
    except UnicodeDecodeError:
        return failed("document: not UTF-8 text", 0)
    if sha256 is None:
        return failed("document: not base64", 0)
    output: str | None = None
    problems: str | None = None
    for attempt in (1, 2):  # the output, then one repair of schema-invalid output
        started = time.perf_counter()
        output = await extractor.extract(text, previous=output, problems=problems)
        latency_ms = (time.perf_counter() - started) * 1000
        try:
            invoice = Invoice.model_validate_json(output)
        except ValidationError as exc:
            problems = _problems(exc)
            calls.append(
                _call(
                    extractor.name,
                    sha256,
                    output,
                    latency_ms=latency_ms,
                    attempt=attempt,
                    problems=problems,
                )
            )
            continue
        calls.append(
            _call(
                extractor.name,
                sha256,
                output,
                latency_ms=latency_ms,
                attempt=attempt,
                problems=None,
            )
        )
        record = ExtractionRecord(
            extractor=extractor.name,
            schema_version=SCHEMA_VERSION,
            attempts=attempt,
            verdict="valid" if attempt == 1 else "repaired",
        )
        return Extracted(
            document_sha256=sha256, invoice=invoice, extraction=record, calls=tuple(calls)
        )
    return failed(problems or "", 2)


def _call(
    extractor: str,
    sha256: str,
    output: str,
    *,
    latency_ms: float,
    attempt: int,
    problems: str | None,
) -> ModelCall:
    """The record of one extraction attempt (its input is the document, by its digest)."""
    try:
        parsed = json.loads(output)
    except ValueError:
        parsed = None
    return ModelCall(
        task="extract",
        model=extractor,
        prompt_version=SCHEMA_VERSION,  # what the output is asked for and checked against
        output=parsed if isinstance(parsed, dict) else {"_unparseable": output[:200]},
        validation="failed" if problems is not None else "passed",
        errors=[problems] if problems else [],
        latency_ms=latency_ms,
        repair=attempt > 1,
        input_digest=sha256,
        input_refs=["document"],
    )


class InvoiceInputs(BaseModel):
    invoice: Invoice


Invalid = TotalsMismatch | UnknownSupplier | DuplicateInvoice


@stage(
    "validate",
    reads=InvoiceInputs,
    emits=(Valid, TotalsMismatch, UnknownSupplier, DuplicateInvoice),
    ports=(FINANCE,),
)
async def validate(job: InvoiceInputs, ctx: StageContext) -> Valid | Invalid:
    """Deterministic: the same invoice and ledger give the same answer at any time."""
    inv = job.invoice
    lines = sum((cents(i.quantity * i.unit_price) for i in inv.items), start=cents(inv.net * 0))
    if lines != inv.net:
        return TotalsMismatch(
            review_reason="totals_mismatch", detail=f"line items {lines} != net {inv.net}"
        )
    if inv.net + inv.tax != inv.total:
        return TotalsMismatch(
            review_reason="totals_mismatch",
            detail=f"net {inv.net} + tax {inv.tax} != total {inv.total}",
        )
    finance = ctx.port(FINANCE)
    if not await finance.supplier_known(inv.supplier):
        return UnknownSupplier(
            review_reason="unknown_supplier", detail="supplier not known to the finance system"
        )
    posted_as = await finance.posted_invoice(inv.supplier, inv.invoice_number)
    if posted_as is not None and posted_as != ctx.workflow_id:
        return DuplicateInvoice(
            review_reason="duplicate_invoice",
            detail=f"this supplier's invoice number was posted as {posted_as}",
        )
    return Valid(invoice_id=ctx.workflow_id, checks=("lines", "totals", "supplier", "duplicate"))


@stage(
    "post", reads=InvoiceInputs, emits=(Posted, PostingUnconfirmed), ports=(FINANCE,), effects=True
)
async def post(job: InvoiceInputs, ctx: StageContext) -> Posted | PostingUnconfirmed:
    """Post with the idempotency key `invoice_id` (the workflow id). An earlier attempt's
    outcome is unknown until the finance system says otherwise, so every attempt asks first,
    and an unanswered posting is looked up before it is ever sent again."""
    finance, invoice_id, inv = ctx.port(FINANCE), ctx.workflow_id, job.invoice
    known = await _posted_as(finance, invoice_id)
    if known is not None:
        return Posted(invoice_id=invoice_id, posting_number=known, posting_reconciled=True)
    try:
        number = await finance.post(invoice_id, inv.supplier, inv.invoice_number, str(inv.total))
    except ExternalTimeout:
        known = await _posted_as(finance, invoice_id)
        if known is not None:
            return Posted(invoice_id=invoice_id, posting_number=known, posting_reconciled=True)
        if ctx.attempt >= POST_ATTEMPTS:
            detail = f"not confirmed after {ctx.attempt} attempts"
            return PostingUnconfirmed(detail=detail, idempotency_key=invoice_id)
        raise  # not known to be posted: retried after a backoff, within the bound
    return Posted(invoice_id=invoice_id, posting_number=number, posting_reconciled=False)


async def _posted_as(finance: Finance, invoice_id: str) -> str | None:
    """The posting number under the key; None when none is found or the lookup went
    unanswered (posting again under the key is safe either way)."""
    try:
        return await finance.lookup(invoice_id)
    except ExternalTimeout:
        return None


class NotifyInputs(BaseModel):
    invoice: Invoice
    posting_number: str


@stage("notify", reads=NotifyInputs, emits=(Notified,), ports=(NOTIFIER,))
async def notify(job: NotifyInputs, ctx: StageContext) -> Notified:
    sent = await ctx.port(NOTIFIER).notify(
        ctx.workflow_id, job.invoice.supplier, job.posting_number
    )
    return Notified(notification_id=sent)


class ReverseInputs(BaseModel):
    posting_number: str | None = None
    """None when the posting's outcome is unknown: it is looked up by its key first."""


@stage(
    "reverse",
    reads=ReverseInputs,
    emits=(PostingReversed, ReversalFailed),
    ports=(FINANCE,),
    effects=True,
    redeliver=True,
)
async def reverse(job: ReverseInputs, ctx: StageContext) -> PostingReversed | ReversalFailed:
    """Reverse the posting under the key `invoice_id`, once (the finance system answers a
    second reversal with the first). A lookup that stays unanswered is redelivered."""
    finance, key = ctx.port(FINANCE), ctx.workflow_id
    number = job.posting_number or await finance.lookup(key)
    if number is None:
        # the finance system holds nothing under the key: there is nothing to reverse
        return PostingReversed(idempotency_key=key, reversal_number=NOTHING_TO_REVERSE)
    try:
        reversal = await finance.reverse(key, number)
    except ExternalRejected as exc:
        return ReversalFailed(error_class=exc.error_class, detail="the finance system refused")
    return PostingReversed(idempotency_key=key, reversal_number=reversal)
