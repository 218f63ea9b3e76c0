"""The invoice workflow's events: stage results and signals, one pydantic model each."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from interlock import ModelCall, Result
from interlock_invoice.document import Invoice, Money

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Detail = Annotated[str, Field(max_length=500)]


class ExtractionRecord(BaseModel):
    """What one extraction asked and got: kept in history, never asked again on recovery."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    extractor: str
    schema_version: str
    attempts: int
    verdict: Literal["valid", "repaired", "invalid"]
    problems: Detail = ""


class Extracted(Result):
    __event__ = "INVOICE_EXTRACTED"
    document_sha256: Sha256
    invoice: Invoice
    extraction: ExtractionRecord
    calls: tuple[ModelCall, ...] = ()
    """Every attempt of the extraction, the invalid first one of a repair included."""


class ExtractionFailed(Result):
    __event__ = "EXTRACTION_FAILED"
    document_sha256: Sha256 | None
    review_reason: Literal["extraction_failed"] = "extraction_failed"
    extraction: ExtractionRecord
    calls: tuple[ModelCall, ...] = ()


class Valid(Result):
    __event__ = "INVOICE_VALID"
    invoice_id: str
    checks: tuple[str, ...]


class _Invalid(Result):
    review_reason: str
    detail: Detail


class TotalsMismatch(_Invalid):
    __event__ = "TOTALS_MISMATCH"


class UnknownSupplier(_Invalid):
    __event__ = "UNKNOWN_SUPPLIER"


class DuplicateInvoice(_Invalid):
    __event__ = "DUPLICATE_INVOICE"


class Posted(Result):
    __event__ = "INVOICE_POSTED"
    invoice_id: str
    posting_number: str
    posting_reconciled: bool
    """The number came from asking the finance system after an unknown outcome."""


class PostingUnconfirmed(Result):
    __event__ = "POSTING_UNCONFIRMED"
    review_reason: Literal["posting_unconfirmed"] = "posting_unconfirmed"
    detail: Detail
    idempotency_key: str | None = None
    """The key to look the posting up by in the finance system (the invoice id)."""


class PostingReversed(Result):
    """The compensation: the posting under the key is reversed, or none was found under it."""

    __event__ = "POSTING_REVERSED"
    idempotency_key: str
    reversal_number: str
    """`NOTHING_TO_REVERSE` when the finance system holds no posting under the key."""


class ReversalFailed(Result):
    __event__ = "REVERSAL_FAILED"
    review_reason: Literal["reversal_failed"] = "reversal_failed"
    error_class: str
    detail: Detail


class Notified(Result):
    __event__ = "NOTIFIED"
    notification_id: str


class Approval(BaseModel):
    """APPROVED: the approver confirms the total they approve."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    total: Money
    comment: Detail | None = None


class Rejection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    reason: Detail = ""


class Cancellation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    reason: Detail = ""


class RetryRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    comment: Detail = ""


def cents(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"))
