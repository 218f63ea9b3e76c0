"""A request the gateway will not publish, and how that refusal is recorded.

Every refusal is answered with its HTTP status and a stable reason code, and recorded on
`wf.dlq.gateway` with the same `Interlock-Dlq-*` headers the consumers use. The record carries
the request body only once the sender is authenticated (an anonymous caller cannot park
arbitrary data in the dead-letter stream), and never a secret or a signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from interlock.contracts import subjects
from interlock.services.errors import Refusal

SOURCE = "gateway"
DLQ_SUBJECT = subjects.dlq(SOURCE)
HEADER_SENDER = "Interlock-Gateway-Sender"
HEADER_PATH = "Interlock-Gateway-Path"
HEADER_WEBHOOK_ID = "Interlock-Gateway-Webhook-Id"

_MAX_HEADER = 1000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def clean(value: str, limit: int = _MAX_HEADER) -> str:
    """`value` as one printable header line, truncated: caller-controlled text (a path, a
    header, a validation summary naming the caller's keys) never spans lines."""
    return _CONTROL.sub(" ", value).strip()[:limit]


@dataclass(frozen=True)
class Record:
    """What is known about a refused request when it is recorded."""

    refusal: Refusal
    path: str
    sender: str | None = None
    webhook_id: str | None = None
    signal_subject: str | None = None
    """The subject the signal or request would have gone to, once the workflow type is known."""

    def headers(self) -> dict[str, str]:
        headers = {
            subjects.HEADER_DLQ_REASON: self.refusal.reason,
            subjects.HEADER_DLQ_DETAIL: clean(self.refusal.detail),
            HEADER_PATH: clean(self.path),
        }
        if self.signal_subject:
            headers[subjects.HEADER_DLQ_SUBJECT] = self.signal_subject
        if self.sender:
            headers[HEADER_SENDER] = clean(self.sender, 200)
        if self.webhook_id:
            headers[HEADER_WEBHOOK_ID] = clean(self.webhook_id, 200)
        return headers
