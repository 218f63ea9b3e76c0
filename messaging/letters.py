"""Reading and redriving dead letters (the `WF_DLQ` stream), for `interlock dlq`.

A dead letter is identified by its sequence number in `WF_DLQ`. Redriving publishes the
original body, unchanged, to the original subject: the event keeps its event id, so a
redriven duplicate of something already decided is still deduplicated by the projector (and
a job by its job id). The redriven copy carries `Nats-Msg-Id: redrive-<sequence>-<nonce>`,
a random nonce making it an id no client can spend ahead of the operator (junk published
under a guessable `redrive-<sequence>` would have had the broker drop the redriven copy as
a duplicate); a copy the broker still reports a duplicate is refused, its letter kept. The
letter is then deleted from `WF_DLQ` (a second redrive of it finds nothing to redrive).

A webhook the gateway refused is recorded but never redrivable: its body is what an outside
sender posted, not a message anyone admitted, and republishing it on the gateway's subject
would present it to the projector with the gateway's authority instead of its sender's.
Its sender delivers a corrected webhook instead.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from interlock.contracts import subjects
from interlock.messaging.errors import NotRedrivable

GATEWAY_SOURCE = "gateway"
HEADER_GATEWAY_SENDER = "Interlock-Gateway-Sender"
HEADER_GATEWAY_WEBHOOK_ID = "Interlock-Gateway-Webhook-Id"


_DLQ_HEADERS = (
    subjects.HEADER_DLQ_REASON,
    subjects.HEADER_DLQ_DETAIL,
    subjects.HEADER_DLQ_SUBJECT,
    subjects.HEADER_MSG_ID,
)


@dataclass(frozen=True)
class Letter:
    """One dead letter: where it came from, why, and the message itself."""

    id: int
    source: str
    reason: str
    detail: str
    subject: str
    stored_at: datetime | None
    headers: dict[str, str]
    body: bytes

    def summary(self) -> dict[str, Any]:
        """What `dlq list` shows: no payload values."""
        envelope = self.envelope()
        return {
            "id": self.id,
            "source": self.source,
            "reason": self.reason,
            "subject": self.subject,
            "stored_at": self.stored_at.isoformat() if self.stored_at else None,
            "event_id": envelope.get("event_id"),
            "type": envelope.get("type"),
            "workflow_id": envelope.get("workflow_id"),
            "bytes": len(self.body),
        }

    def full(self) -> dict[str, Any]:
        """What `dlq show` shows: the summary, the detail, the headers and the body."""
        envelope = self.envelope()
        return {
            **self.summary(),
            "detail": self.detail,
            "headers": self.headers,
            "body": envelope or self.body.decode(errors="replace"),
        }

    def not_redrivable(self) -> str | None:
        """Why this letter may not be redriven, in one line (None: it may)."""
        if self.source == GATEWAY_SOURCE:
            sender = self.headers.get(HEADER_GATEWAY_SENDER, "unauthenticated")
            return (
                f"dead letter {self.id} is a webhook the gateway refused (sender {sender}): "
                "not redrivable; its sender delivers a corrected webhook"
            )
        if not self.subject:
            return f"dead letter {self.id} does not say where it came from"
        return None

    def envelope(self) -> dict[str, Any]:
        try:
            parsed = json.loads(self.body)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}


async def letter(js: JetStreamContext, sequence: int) -> Letter | None:
    """The dead letter stored at `sequence`, or None if there is none."""
    try:
        raw = await js.get_msg(subjects.STREAM_DLQ, sequence)
    except NotFoundError:
        return None
    headers = dict(raw.headers or {})
    return Letter(
        id=sequence,
        source=(raw.subject or "").removeprefix(f"{subjects.DLQ_PREFIX}."),
        reason=headers.get(subjects.HEADER_DLQ_REASON, ""),
        detail=headers.get(subjects.HEADER_DLQ_DETAIL, ""),
        subject=headers.get(subjects.HEADER_DLQ_SUBJECT, ""),
        stored_at=raw.time if isinstance(raw.time, datetime) else None,
        headers=headers,
        body=raw.data or b"",
    )


async def letters(
    js: JetStreamContext, *, source: str | None = None, reason: str | None = None
) -> AsyncIterator[Letter]:
    """Every dead letter (oldest first), optionally only of one source and/or reason."""
    try:
        state = (await js.stream_info(subjects.STREAM_DLQ)).state
    except NotFoundError:  # nothing provisioned: nothing dead-lettered either
        return
    if not state.messages:
        return
    for sequence in range(state.first_seq, state.last_seq + 1):
        found = await letter(js, sequence)
        if found is None:
            continue
        if source not in (None, found.source) or reason not in (None, found.reason):
            continue
        yield found


async def redrive(js: JetStreamContext, dead: Letter) -> None:
    """Publish the letter's message to its original subject, then delete the letter. Raises
    `NotRedrivable` (before publishing anything) for a letter that may not go back."""
    why_not = dead.not_redrivable()
    if why_not is not None:
        raise NotRedrivable(why_not)
    # The broker's own headers (`Nats-Expected-Stream: WF_DLQ` among them) stay behind.
    headers = {
        k: v for k, v in dead.headers.items() if k not in _DLQ_HEADERS and not k.startswith("Nats-")
    }
    headers[subjects.HEADER_MSG_ID] = f"redrive-{dead.id}-{secrets.token_hex(8)}"
    ack = await js.publish(dead.subject, dead.body, headers=headers)
    if ack.duplicate:  # never for a fresh nonce: the letter stays rather than vanish unheard
        raise NotRedrivable(f"the broker dropped the redriven copy of letter {dead.id}")
    await js.delete_msg(subjects.STREAM_DLQ, dead.id)
