"""The gateway's HTTP application: authenticated webhooks in, request and signal messages out.

`POST /v1/workflows/{workflow_type}/{workflow_id}/signals` (a signal) and
`POST /v1/workflows/{workflow_type}` (a request: it starts a workflow) answer

* 202 `{"event_id", "subject"}` once JetStream has durably stored the message (a webhook
  delivered again is the same `event_id` and `Nats-Msg-Id`: stored once); a request's answer
  adds the `workflow_id` it starts;
* 401/403/400/404/413 `{"error": <reason>, "detail"}` for a refusal, after recording it on
  `wf.dlq.gateway` (see `refusal`);
* 429 `rate_limited` beyond the sender's rate, or the shared rate of unauthenticated
  traffic (see `limits`): not recorded, only counted;
* 503 when the broker does not acknowledge: nothing is known to be stored, the sender should
  deliver the same webhook again.

`GET /v1/workflows/{workflow_type}/{workflow_id}` answers what became of a workflow and of a
webhook (see `reads`). `GET /healthz` answers 200 while the NATS connection is up, else 503.
Each request to either route is one SERVER span continuing the caller's `traceparent`;
bodies are never put on spans.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from aiohttp import web
from opentelemetry import trace
from opentelemetry.trace import Span

from interlock.contracts import subjects
from interlock.contracts.envelope import MAX_MESSAGE_BYTES, Envelope, utcnow
from interlock.contracts.errors import PublishFailed
from interlock.contracts.partitions import routing_key
from interlock.contracts.registry import Registry
from interlock.contracts.sender_claims import HEADER_SENDER_CLAIM
from interlock.otel import metrics
from interlock.otel.messaging import publishing
from interlock.services.errors import Refusal
from interlock.services.gateway import reads, signals, starts
from interlock.services.gateway.auth import HEADER_SENDER, SenderRegistry
from interlock.services.gateway.claims import ClaimSigner
from interlock.services.gateway.limits import Limits, RateLimits
from interlock.services.gateway.refusal import DLQ_SUBJECT, SOURCE, Record, clean
from interlock.services.gateway.spans import answered, server_span

CLIENT = SOURCE
"""The gateway publishes as NATS client `gateway`: `wf.in.signal.<type>.<key>.gateway`,
`wf.in.request.<type>.<key>.gateway`, keyed by the workflow it derives."""

log = logging.getLogger("interlock.gateway")
tracer = trace.get_tracer("interlock.gateway")

ROUTE = "/v1/workflows/{workflow_type}/{workflow_id}/signals"
START_ROUTE = "/v1/workflows/{workflow_type}"
HEADER_CORRELATION = "interlock-correlation-id"
HEADER_CAUSATION = "interlock-causation-id"

Publish = Callable[[str, bytes, dict[str, str]], Awaitable[None]]
"""`(subject, data, headers)`: returns once JetStream has stored the message; raises
`PublishFailed` otherwise."""


@dataclass(frozen=True)
class Gateway:
    """The application's dependencies, injected so tests build it with real ones."""

    publish: Publish
    senders: SenderRegistry
    connected: Callable[[], bool]
    rates: RateLimits
    workflows: Registry
    clock: Callable[[], datetime] = utcnow
    read_status: reads.ReadStatus | None = None
    claims: ClaimSigner | None = None
    """Signs the sender each message speaks for (`contracts.sender_claims`)."""


GATEWAY = web.AppKey("gateway", Gateway)


def create_app(
    publish: Publish,
    senders: SenderRegistry,
    *,
    workflows: Registry,
    connected: Callable[[], bool],
    clock: Callable[[], datetime] = utcnow,
    limits: Limits | None = None,
    read_status: reads.ReadStatus | None = None,
    claims: ClaimSigner | None = None,
) -> web.Application:
    """The gateway as an aiohttp application; it creates no connection of its own.
    `read_status`: its read of workflows (without it, reading one answers 503); `claims`:
    signs each message's sender (a projector that verifies claims refuses unsigned ones)."""
    app = web.Application(client_max_size=MAX_MESSAGE_BYTES)
    rates = RateLimits(limits or Limits())
    app[GATEWAY] = Gateway(
        publish, senders, connected, rates, workflows, clock, read_status, claims
    )
    app.router.add_post(ROUTE, _post_signal)
    app.router.add_post(START_ROUTE, _post_start)
    app.router.add_get(reads.ROUTE, _get_workflow)
    app.router.add_get("/healthz", _healthz)
    return app


async def _healthz(request: web.Request) -> web.Response:
    if request.app[GATEWAY].connected():
        return web.json_response({"nats": "connected"})
    return web.json_response({"nats": "disconnected"}, status=503)


async def _post_signal(request: web.Request) -> web.Response:
    with server_span(request, ROUTE) as span:
        return answered(span, await _accept(request.app[GATEWAY], request, span, _signal))


async def _post_start(request: web.Request) -> web.Response:
    with server_span(request, START_ROUTE) as span:
        return answered(span, await _accept(request.app[GATEWAY], request, span, _start))


async def _get_workflow(request: web.Request) -> web.Response:
    gw = request.app[GATEWAY]
    with server_span(request, reads.ROUTE) as span:
        response = await reads.answer(
            request,
            senders=gw.senders,
            rates=gw.rates,
            workflows=gw.workflows,
            read=gw.read_status,
        )
        return answered(span, response)


Build = Callable[[Gateway, web.Request, str, bytes, Span], Envelope]
"""From an authenticated sender's body to the envelope to publish; raises `Refusal`."""


async def _accept(gw: Gateway, request: web.Request, span: Span, build: Build) -> web.Response:
    """Authenticate, rate-limit, `build` and publish; a refusal is answered and recorded."""
    body, authentic = b"", False
    try:
        body = await _read(request)
        sender = await _authenticated(gw, request.headers, body)
        authentic = True
        if not await gw.rates.sender_allows(sender):
            return _rate_limited(span)
        event = build(gw, request, sender, body, span)
    except Refusal as refusal:
        if not (authentic or await gw.rates.unauthenticated_allows()):
            return _rate_limited(span)
        span.set_attribute("interlock.dead_letter_reason", refusal.reason)
        await _record(gw, request, refusal, body if authentic else b"")
        return web.json_response(
            {"error": refusal.reason, "detail": refusal.detail}, status=refusal.status
        )
    span.set_attribute("interlock.event_id", event.event_id)
    span.set_attribute("interlock.workflow_id", gw.workflows.workflow_id(event))
    return await _publish(gw, event, sender)


def _signal(gw: Gateway, request: web.Request, sender: str, body: bytes, span: Span) -> Envelope:
    workflow_type, headers = request.match_info["workflow_type"], request.headers
    signal = signals.parse(body)
    span.set_attribute("interlock.event_type", signal.type)
    gw.senders.authorize(sender, signal.actor.id, signal.actor.role)
    gw.senders.admit_type(sender, workflow_type)
    signals.check(gw.workflows, workflow_type, signal)
    return signals.envelope(
        workflow_type,
        request.match_info["workflow_id"],
        signal,
        sender=sender,
        tenant_id=gw.senders.tenant(sender, signal.tenant_id),
        webhook_id=headers["webhook-id"],
        occurred_at=gw.clock(),
        correlation_id=headers.get(HEADER_CORRELATION),
        causation_id=headers.get(HEADER_CAUSATION),
    )


def _start(gw: Gateway, request: web.Request, sender: str, body: bytes, span: Span) -> Envelope:
    workflow_type, headers = request.match_info["workflow_type"], request.headers
    start = starts.parse(body)
    span.set_attribute("interlock.event_type", starts.START)
    starts.known(gw.workflows, workflow_type)
    gw.senders.admit_type(sender, workflow_type)
    starts.check(gw.workflows, workflow_type, start)
    return starts.envelope(
        workflow_type,
        start,
        sender=sender,
        tenant_id=gw.senders.tenant(sender, start.tenant_id),
        webhook_id=headers["webhook-id"],
        occurred_at=gw.clock(),
        correlation_id=headers.get(HEADER_CORRELATION),
    )


async def _authenticated(gw: Gateway, headers: Mapping[str, str], body: bytes) -> str:
    return gw.senders.authenticate(headers.get(HEADER_SENDER), body, headers)


def _rate_limited(span: Span) -> web.Response:
    """Refused for its rate: counted, neither recorded nor logged one by one."""
    span.set_attribute("interlock.dead_letter_reason", "rate_limited")
    return reads.rate_limited()


async def _read(request: web.Request) -> bytes:
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise Refusal(413, "oversized", f"body over {MAX_MESSAGE_BYTES} bytes") from None


async def _publish(gw: Gateway, event: Envelope, sender: str) -> web.Response:
    workflow_id = gw.workflows.workflow_id(event)
    key = routing_key(event.tenant_id, workflow_id)
    event_id = event.event_id
    subject = _subject(event.type == starts.START, event.workflow_type, key)
    data, headers = event.to_bytes(), {subjects.HEADER_MSG_ID: event_id}
    if gw.claims is not None:
        headers[HEADER_SENDER_CLAIM] = gw.claims.header(sender, data)
    try:
        await _send(gw, subject, data, headers, event_id)
    except PublishFailed as exc:
        log.warning("%s %s not published (%s); the sender should retry", event.type, event_id, exc)
        detail = "the broker did not acknowledge; deliver the same webhook again"
        return web.json_response({"error": "broker_unavailable", "detail": detail}, status=503)
    log.info("published %s %s for %s", event.type, event_id, workflow_id)
    answer = {"event_id": event_id, "subject": subject}
    if event.type == starts.START:
        answer["workflow_id"] = workflow_id
    return web.json_response(answer, status=202)


def _subject(request: bool, workflow_type: str, key: str | None = None) -> str:
    return (subjects.request if request else subjects.signal)(workflow_type, CLIENT, key)


async def _send(
    gw: Gateway, subject: str, data: bytes, headers: dict[str, str], message_id: str | None
) -> None:
    """Publish in a PRODUCER span, a child of the request's SERVER span."""
    span = publishing(
        tracer, subject, headers, message_id=message_id, template=subjects.template(subject)
    )
    with trace.use_span(span, end_on_exit=True):
        await gw.publish(subject, data, headers)


async def _record(gw: Gateway, request: web.Request, refusal: Refusal, body: bytes) -> None:
    """Record a refusal on `wf.dlq.gateway`; a broker failure is logged, never raised (the
    caller still gets its refusal)."""
    workflow_type = request.match_info["workflow_type"]
    known = workflow_type in gw.workflows.workflow_types()
    record = Record(
        refusal,
        path=request.path,
        sender=request.headers.get(HEADER_SENDER),
        webhook_id=request.headers.get("webhook-id"),
        signal_subject=_subject(_is_start(request), workflow_type) if known else None,
    )
    metrics.dead_letter(SOURCE, refusal.reason)
    log.warning("refused %r: %s (%s)", request.path, refusal.reason, clean(refusal.detail))
    try:
        await _send(gw, DLQ_SUBJECT, body, record.headers(), None)
    except PublishFailed as exc:
        log.error("refusal %s of %r not recorded: %s", refusal.reason, request.path, exc)


def _is_start(request: web.Request) -> bool:
    return "workflow_id" not in request.match_info
