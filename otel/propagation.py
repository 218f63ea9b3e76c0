"""W3C trace context in NATS headers (and in outbox/timer rows, which store those headers)."""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import propagate, trace
from opentelemetry.context import Context


def inject(carrier: dict[str, str] | None = None, context: Context | None = None) -> dict[str, str]:
    """The current (or given) trace context as headers (`traceparent`, `tracestate`)."""
    headers: dict[str, str] = {} if carrier is None else carrier
    propagate.inject(headers, context=context)
    return headers


def extract(headers: Mapping[str, str] | None) -> Context:
    """The context a message's headers carry (an empty context if none)."""
    return propagate.extract(dict(headers or {}))


def current_trace_id() -> str | None:
    """The hex id of the active trace, or None when nothing is being traced."""
    ctx = trace.get_current_span().get_span_context()
    return format(ctx.trace_id, "032x") if ctx.is_valid else None
