"""Spans for NATS hops, following the OpenTelemetry messaging semantic conventions, with
Interlock's own attributes under the `interlock.` prefix."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind, StatusCode

from interlock.otel.propagation import extract, inject

SYSTEM = "nats"


def _attributes(subject: str, operation: str, message_id: str | None) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "messaging.system": SYSTEM,
        "messaging.destination.name": subject,
        "messaging.operation.type": operation,
    }
    if message_id:
        attributes["messaging.message.id"] = message_id
    return attributes


@contextmanager
def consuming(
    tracer: trace.Tracer,
    name: str,
    subject: str,
    headers: Mapping[str, str] | None,
    *,
    message_id: str | None = None,
    links: tuple[Link, ...] = (),
) -> Iterator[Span]:
    """A CONSUMER span continuing the trace the message carries."""
    with tracer.start_as_current_span(
        name,
        context=extract(headers),
        kind=SpanKind.CONSUMER,
        links=links,
        attributes=_attributes(subject, "process", message_id),
    ) as span:
        yield span


def publishing(
    tracer: trace.Tracer,
    subject: str,
    headers: dict[str, str],
    parent: Mapping[str, str] | None = None,
    *,
    message_id: str | None = None,
    template: str | None = None,
) -> Span:
    """Start a PRODUCER span (child of `parent` headers, else of the current context) and
    write its context into `headers`, so the consumer continues from it. End it on the ack.
    A subject carrying a value of its own per message (a workflow's routing key) names the
    span by its `template` (`contracts.subjects.template`), so span names stay few."""
    context = extract(parent) if parent is not None else None
    attributes = _attributes(subject, "send", message_id)
    if template is not None and template != subject:
        attributes["messaging.destination.template"] = template
    span = tracer.start_span(
        f"{template or subject} publish",
        context=context,
        kind=SpanKind.PRODUCER,
        attributes=attributes,
    )
    inject(headers, trace.set_span_in_context(span))
    return span


Ending = Callable[[BaseException | None, bool], None]
"""Ends a publish span: with the publish's error, or with whether the broker already held the
message (a duplicate its window dropped)."""


@functools.lru_cache(maxsize=16)
def _tracer(name: str) -> trace.Tracer:
    return trace.get_tracer(name)


def producer(
    tracer_name: str,
    subject: str,
    headers: dict[str, str],
    *,
    message_id: str | None,
    template: str | None,
    attributes: Mapping[str, Any],
) -> Ending | None:
    """The PRODUCER span of a message whose `headers` carry the context of the decision that
    made it (written into the row or the timer with it), started now as its child, its own
    context then replacing it in `headers`; None, and no span, for a message without one
    (bookkeeping written without a decision's context)."""
    if "traceparent" not in headers:
        return None
    span = publishing(
        _tracer(tracer_name), subject, headers, headers, message_id=message_id, template=template
    )
    span.set_attributes(dict(attributes))

    def end(error: BaseException | None, duplicate: bool) -> None:
        if error is not None:
            span.record_exception(error)
            span.set_status(StatusCode.ERROR, type(error).__name__)
        elif duplicate:
            span.set_attribute("interlock.duplicate_publish", True)
        span.end()

    return end


def link_from(headers: Mapping[str, str] | None) -> tuple[Link, ...]:
    """A link to the span whose context `headers` carry (none if they carry none)."""
    context = trace.get_current_span(extract(headers)).get_span_context()
    return (Link(context),) if context.is_valid else ()


@contextmanager
def client_span(
    tracer: trace.Tracer, name: str, attributes: Mapping[str, Any] | None = None
) -> Iterator[Span]:
    """A CLIENT span around a call to another system (a model, a provider); an exception
    leaving it is recorded and marks the span as an error."""
    with tracer.start_as_current_span(
        name, kind=SpanKind.CLIENT, attributes=dict(attributes or {})
    ) as span:
        yield span
