"""Publish spans for the relay and the timer service, continuing the trace stored with the
row that caused the message (the decision that wrote the outbox row or armed the timer)."""

from __future__ import annotations

from typing import Any

from nats.js.api import PubAck
from opentelemetry import trace
from opentelemetry.trace import Span, StatusCode

from interlock.contracts import subjects
from interlock.otel.messaging import publishing
from interlock.relay.publish import PublishDone
from interlock.relay.store import OutboxRow

tracer = trace.get_tracer("interlock.relay")


def start_publish(subject: str, headers: dict[str, str], **attributes: Any) -> Span | None:
    """A PRODUCER span whose parent is the context stored with the row, which `headers`
    carry (and which the span's own context then replaces); None when nothing was traced
    (bookkeeping rows such as the open-jobs record carry no context)."""
    if "traceparent" not in headers:
        return None
    span = publishing(
        tracer,
        subject,
        headers,
        headers,
        message_id=headers.get(subjects.HEADER_MSG_ID),
        template=subjects.template(subject),
    )
    span.set_attributes({k: v for k, v in attributes.items() if v is not None})
    return span


def finish(span: Span | None, outcome: PubAck | BaseException | None) -> None:
    if span is None:
        return
    if isinstance(outcome, BaseException):
        span.record_exception(outcome)
        span.set_status(StatusCode.ERROR, type(outcome).__name__)
    elif isinstance(outcome, PubAck) and outcome.duplicate:
        span.set_attribute("interlock.duplicate_publish", True)
    span.end()


def traced_publish(row: OutboxRow, headers: dict[str, str]) -> PublishDone:
    """The relay's publish hook: one span per outbox row, ended on its ack or error."""
    span = start_publish(row.subject, headers, **{"interlock.outbox_id": row.id})
    return lambda outcome: finish(span, outcome)
