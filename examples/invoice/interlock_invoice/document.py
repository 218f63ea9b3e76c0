"""The invoice document: the request that carries it, the versioned schema extraction fills,
and the plain-text format the default extractor reads.

```
INVOICE
Supplier: Acme Paper GmbH
Invoice number: AP-2026-0042
Invoice date: 2026-11-02
Currency: EUR
Item: Copy paper A4 | 10 | 4.50
Net: 45.00
Tax: 8.55
Total: 53.55
```
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping
from datetime import date
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "invoice/v1"
MAX_DOCUMENT_B64 = 256 * 1024

Money = Annotated[Decimal, Field(max_digits=14, decimal_places=2)]
Text = Annotated[str, Field(min_length=1, max_length=200)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Document(_Model):
    filename: Text
    media_type: Literal["text/plain"]
    content_b64: Annotated[str, Field(min_length=1, max_length=MAX_DOCUMENT_B64)]


class InvoiceRequest(_Model):
    """What upstream sends (START)."""

    document: Document


class LineItem(_Model):
    description: Text
    quantity: Annotated[Decimal, Field(gt=0, max_digits=12, decimal_places=3)]
    unit_price: Money


class Invoice(_Model):
    """The versioned invoice schema (`SCHEMA_VERSION`) an extractor must produce."""

    supplier: Text
    invoice_number: Text
    invoice_date: date
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")]
    items: Annotated[list[LineItem], Field(min_length=1, max_length=500)]
    net: Money
    tax: Money
    total: Money


def decoded(content_b64: str) -> bytes | None:
    try:
        return base64.b64decode(content_b64, validate=True)
    except (binascii.Error, ValueError):
        return None


def sha256_of(content_b64: str) -> str | None:
    raw = decoded(content_b64)
    return None if raw is None else hashlib.sha256(raw).hexdigest()


def document_key(payload: Mapping[str, Any]) -> str | None:
    """The workflow key of a request: the SHA-256 of the document's bytes, so the same file
    from the same tenant is the same workflow whatever the event id (None if undecodable:
    the request is then refused by its schema or its stage anyway)."""
    document = payload.get("document")
    content = document.get("content_b64") if isinstance(document, Mapping) else None
    return sha256_of(content) if isinstance(content, str) else None


_FIELDS = {
    "supplier": "supplier",
    "invoice number": "invoice_number",
    "invoice date": "invoice_date",
    "currency": "currency",
    "net": "net",
    "tax": "tax",
    "total": "total",
}


def parse_plain_text(text: str) -> dict[str, Any]:
    """Read the plain-text format into the schema's JSON shape, without judging it: missing
    or malformed fields are left for schema validation to name."""
    fields: dict[str, Any] = {"items": []}
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if not sep:
            continue
        label, value = label.strip().lower(), value.strip()
        if label == "item":
            parts = [p.strip() for p in value.split("|")]
            if len(parts) == 3:
                fields["items"].append(
                    {"description": parts[0], "quantity": parts[1], "unit_price": parts[2]}
                )
            else:
                fields["items"].append({"description": value})
        elif label in _FIELDS:
            fields[_FIELDS[label]] = value
    return fields


def render(invoice: Mapping[str, Any]) -> str:
    """The plain-text document for `invoice` (the schema's JSON shape): fixtures and demos."""
    lines = [
        "INVOICE",
        f"Supplier: {invoice['supplier']}",
        f"Invoice number: {invoice['invoice_number']}",
        f"Invoice date: {invoice['invoice_date']}",
        f"Currency: {invoice['currency']}",
        *(
            f"Item: {i['description']} | {i['quantity']} | {i['unit_price']}"
            for i in invoice["items"]
        ),
        f"Net: {invoice['net']}",
        f"Tax: {invoice['tax']}",
        f"Total: {invoice['total']}",
    ]
    return "\n".join(lines) + "\n"


def request_for(text: str, filename: str = "invoice.txt") -> dict[str, Any]:
    """A START payload carrying `text` as the document."""
    content = base64.b64encode(text.encode()).decode()
    return {"document": {"filename": filename, "media_type": "text/plain", "content_b64": content}}


def as_json(fields: Mapping[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True)
