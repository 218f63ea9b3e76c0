"""The gateway's SERVER spans: one per request, continuing the caller's W3C trace context,
with HTTP semantic-convention attributes; ids and outcomes only, never a body."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from aiohttp import web
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from interlock.otel.propagation import extract

tracer = trace.get_tracer("interlock.gateway")


def answered(span: Span, response: web.Response) -> web.Response:
    span.set_attribute("http.response.status_code", response.status)
    if response.status >= 500:
        span.set_status(Status(StatusCode.ERROR))
        span.set_attribute("error.type", str(response.status))
    return response


@contextmanager
def server_span(request: web.Request, route: str) -> Iterator[Span]:
    """A SERVER span with HTTP semantic-convention attributes, continuing the caller's
    W3C trace context; ids and outcomes only: no header values, no caller address, no body."""
    carrier = {name.lower(): value for name, value in request.headers.items()}
    attributes: dict[str, Any] = {
        "http.request.method": request.method,
        "http.route": route,
        "url.path": request.url.raw_path,
        "url.scheme": request.scheme,
        "server.address": request.url.host,
        "server.port": request.url.port,
        "network.protocol.version": f"{request.version.major}.{request.version.minor}",
        "interlock.workflow_type": request.match_info["workflow_type"],
        "interlock.workflow_id": request.match_info.get("workflow_id"),
    }
    with tracer.start_as_current_span(
        f"{request.method} {route}",
        context=extract(carrier),
        kind=SpanKind.SERVER,
        attributes={k: v for k, v in attributes.items() if v is not None},
    ) as span:
        yield span
