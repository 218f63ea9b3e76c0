"""W3C trace context in NATS headers (and in outbox/timer rows, which store those headers).

Only the trace context travels (`traceparent`, `tracestate`), never W3C baggage: baggage is
free-form data a caller attaches, which the default propagators would copy from an inbound
request into every job and announcement it causes. It is dropped at every edge.
"""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_TRACE_CONTEXT = TraceContextTextMapPropagator()


def inject(carrier: dict[str, str] | None = None, context: Context | None = None) -> dict[str, str]:
    """The current (or given) trace context as headers (`traceparent`, `tracestate`)."""
    headers: dict[str, str] = {} if carrier is None else carrier
    _TRACE_CONTEXT.inject(headers, context=context)
    return headers


def extract(headers: Mapping[str, str] | None) -> Context:
    """The trace context a message's headers carry (an empty context if none); whatever
    else they carry, baggage included, stays behind."""
    return _TRACE_CONTEXT.extract(dict(headers or {}), context=Context())


def current_trace_id() -> str | None:
    """The hex id of the active trace, or None when nothing is being traced."""
    ctx = trace.get_current_span().get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else None
