"""The relay's side of JetStream: outbox rows published in order (`messaging.ordered`), and
dead-lettered when the broker refuses one for good.

Every message carries `Nats-Msg-Id: <instance>-<row id>`, so publishing a row again (after a
crash before the cursor moved, or a retry) is dropped by the stream's duplicate window.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import nats.errors
from nats.js import JetStreamContext
from nats.js.errors import APIError, NoStreamResponseError

from interlock.contracts import subjects
from interlock.messaging.ordered import Done, OrderedPublisher, Outgoing, Published
from interlock.relay.store import OutboxRow

DEAD_LETTER_SUBJECT = subjects.dlq("relay")

PublishDone = Done
PublishHook = Callable[[OutboxRow, dict[str, str]], PublishDone]
"""Called just before a row is sent, with the headers about to go out (it may add to them,
e.g. a new `traceparent`); returns what to call with the ack or the error. The seam for a
publish span that continues the trace stored with the row."""

# Errors after which the broker itself said it will not take the message; everything else
# (timeouts, lost connections, 5xx) says nothing about the row and is retried forever.
_REFUSALS: dict[type[Exception], str] = {
    NoStreamResponseError: "unroutable",
    nats.errors.MaxPayloadError: "too_large",
    nats.errors.BadSubjectError: "bad_subject",
    nats.errors.BadHeaderError: "bad_header",
}


def refusal_reason(error: BaseException) -> str | None:
    """Why the broker will never accept this message, or None when a retry may succeed."""
    if isinstance(error, APIError):
        return "rejected" if error.code is not None and error.code < 500 else None
    return next((r for kind, r in _REFUSALS.items() if isinstance(error, kind)), None)


def string_headers(stored: Mapping[str, Any]) -> dict[str, str]:
    """Headers kept as JSON in a row, as NATS headers: strings unchanged, others as JSON."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in stored.items()}


def message_headers(row: OutboxRow, instance: str) -> dict[str, str]:
    """The row's headers plus its Nats-Msg-Id."""
    headers = string_headers(row.headers)
    headers[subjects.HEADER_MSG_ID] = subjects.outbox_message_id(instance, row.id)
    return headers


class Publisher:
    def __init__(self, js: JetStreamContext, instance: str, hook: PublishHook) -> None:
        self._js = js
        self._instance = instance
        self._hook = hook
        self._ordered = OrderedPublisher(js)

    async def publish(self, rows: Sequence[OutboxRow]) -> Published:
        """Publish `rows` in order and report the longest acknowledged prefix: the head
        alone (a failing row stays at the head of every retry, nothing behind it sent), the
        rest pipelined (`messaging.ordered`). Rows after a failed one may still have been
        stored; publishing them again later is deduplicated."""
        outgoing = [Outgoing(r.subject, message_headers(r, self._instance), r.body) for r in rows]
        return await self._ordered.publish(
            outgoing, lambda index, message: self._hook(rows[index], message.headers)
        )

    async def dead_letter(self, row: OutboxRow, error: BaseException, reason: str) -> None:
        """Publish `row` to `wf.dlq.relay` with why it could not go to its own subject.

        Headers or a body the broker refused are left out. Raises what `js.publish` raises.
        """
        headers = {subjects.HEADER_MSG_ID: subjects.outbox_message_id(self._instance, row.id)}
        if not isinstance(error, nats.errors.BadHeaderError):
            headers = message_headers(row, self._instance)
        headers[subjects.HEADER_DLQ_REASON] = reason
        headers[subjects.HEADER_DLQ_SUBJECT] = row.subject
        headers[subjects.HEADER_DLQ_DETAIL] = f"{type(error).__name__}: {error}"[:500]
        body = b"" if isinstance(error, nats.errors.MaxPayloadError) else row.body
        await self._js.publish(DEAD_LETTER_SUBJECT, body, headers=headers)
