"""The projector's FastStream consumer: a durable pull consumer on `wf.in.>`, explicit acks.

Messages of different workflows are decided concurrently; messages of one workflow are
decided one at a time, in stream order (a keyed dispatcher), so a command published right
after a request is never decided before it, and racing transactions on one workflow are the
exception rather than the rule.

Ack policy, per outcome:
* decided (accepted or rejected, including duplicates) -> ack;
* malformed (bad JSON, unknown type, schema mismatch, oversized, unknown workflow)
  -> dead-letter on `wf.dlq.projector` with the reason, and terminate;
* a timer firing before its time -> nak until it is due;
* anything else (database down, lost races, a bug) -> nak with a growing delay, and
  dead-letter with `max_deliver_exceeded` on the last permitted delivery.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from contextlib import suppress

from faststream.middlewares import AckPolicy
from faststream.nats import JStream, NatsBroker, PullSub
from faststream.nats.annotations import NatsMessage
from faststream.nats.message import NatsMessage as NatsMessageType
from opentelemetry import trace
from opentelemetry.trace import Link, Span

from contracts import subjects
from contracts.envelope import Envelope, MalformedMessage, parse_envelope, utcnow
from contracts.ids import workflow_id_for
from otel.messaging import consuming, link_from
from otel.propagation import current_trace_id, inject
from projector.service import NotDueYet, Outcome, Projector
from projector.store.types import TraceInfo
from services.runtime.deadletter import dead_letter, is_last_delivery

log = logging.getLogger("interlock.projector")
tracer = trace.get_tracer("interlock.projector")
MAX_DELIVER = 8
"""Must equal the projector consumer's max_deliver (see interlock.streams)."""
SOURCE = "projector"

Parsed = tuple[NatsMessageType, Envelope | MalformedMessage]


class KeyedDispatcher:
    """Concurrent across workflows, sequential within one: `workers` queues keyed by id."""

    def __init__(self, broker: NatsBroker, projector: Projector, workers: int) -> None:
        self._broker = broker
        self._projector = projector
        self._queues: list[asyncio.Queue[Parsed]] = [
            asyncio.Queue(maxsize=64) for _ in range(workers)
        ]
        self._tasks: list[asyncio.Task[None]] = []

    async def submit(self, msg: NatsMessageType) -> None:
        try:
            parsed: Envelope | MalformedMessage = parse_envelope(msg.body)
        except MalformedMessage as exc:
            parsed = exc
        if not self._tasks:
            self._tasks = [asyncio.create_task(self._work(q)) for q in self._queues]
        key = _key(parsed)
        await self._queues[zlib.crc32(key.encode()) % len(self._queues)].put((msg, parsed))

    async def _work(self, queue: asyncio.Queue[Parsed]) -> None:
        while True:
            msg, parsed = await queue.get()
            try:
                await consume(self._broker, self._projector, msg, parsed)
            except Exception:  # never let one message kill the worker; it will be redelivered
                log.exception("unexpected failure deciding %s", msg.raw_message.subject)

    async def aclose(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with suppress(asyncio.CancelledError):
                await task


def _key(parsed: Envelope | MalformedMessage) -> str:
    if isinstance(parsed, MalformedMessage):
        return ""
    if parsed.workflow_id:
        return parsed.workflow_id
    return workflow_id_for(parsed.workflow_type, parsed.tenant_id, parsed.event_id)


def register(broker: NatsBroker, projector: Projector, *, workers: int = 16) -> KeyedDispatcher:
    """Subscribe the projector to every inbound subject on `broker`."""
    dispatcher = KeyedDispatcher(broker, projector, workers)

    @broker.subscriber(
        f"{subjects.IN_PREFIX}.>",
        stream=JStream(subjects.STREAM_IN, declare=False),
        durable=subjects.CONSUMER_PROJECTOR,
        pull_sub=PullSub(batch_size=max(workers * 4, 32), timeout=1.0),
        ack_policy=AckPolicy.MANUAL,
    )
    async def on_event(msg: NatsMessage) -> None:
        await dispatcher.submit(msg)

    return dispatcher


async def _links(
    projector: Projector, headers: dict[str, str], parsed: Envelope | MalformedMessage
) -> tuple[Link, ...]:
    """A message without trace context (a person approving days later, an untraced client)
    starts a new trace, linked to the trace of the transition it answers."""
    if "traceparent" in headers or isinstance(parsed, MalformedMessage):
        return ()
    if not parsed.workflow_id:
        return ()
    return link_from(await projector.trace_headers(parsed.workflow_id))


async def consume(
    broker: NatsBroker,
    projector: Projector,
    msg: NatsMessageType,
    parsed: Envelope | MalformedMessage,
) -> None:
    raw = msg.raw_message
    headers = dict(raw.headers or {})
    event = parsed if isinstance(parsed, Envelope) else None
    name = f"projector decide {event.type}" if event else "projector decide"
    links = await _links(projector, headers, parsed)
    event_id = event.event_id if event else None
    with consuming(tracer, name, raw.subject, headers, message_id=event_id, links=links) as span:
        try:
            if isinstance(parsed, MalformedMessage):
                raise parsed
            outcome = await projector.handle(parsed, TraceInfo(current_trace_id(), inject()))
            _describe(span, outcome)
        except MalformedMessage as exc:
            span.set_attribute("interlock.dead_letter_reason", exc.reason)
            await dead_letter(broker, msg, source=SOURCE, reason=exc.reason, detail=exc.detail)
            return
        except NotDueYet as exc:
            delay = (exc.retry_at - utcnow()).total_seconds()
            await msg.nack(delay=min(max(delay, 0.05), 3600.0))
            return
        except Exception as exc:
            await _retry_later(broker, msg, exc)
            return
    await msg.ack()


def _describe(span: Span, outcome: Outcome) -> None:
    span.set_attributes(
        {
            "interlock.workflow_id": outcome.workflow_id,
            "interlock.workflow_type": outcome.workflow_type,
            "interlock.event_type": outcome.event_type,
            "interlock.from_state": outcome.from_state or "",
            "interlock.to_state": outcome.to_state or outcome.from_state or "",
            "interlock.state_version": outcome.version or 0,
            "interlock.accepted": outcome.accepted,
        }
    )
    if not outcome.accepted:
        span.set_attribute("interlock.rejection_reason", outcome.reason or "")
        span.add_event("rejected", {"interlock.rejection_reason": outcome.reason or ""})


async def _retry_later(broker: NatsBroker, msg: NatsMessageType, exc: Exception) -> None:
    if is_last_delivery(msg, MAX_DELIVER):
        detail = f"{type(exc).__name__}: {exc}"
        await dead_letter(broker, msg, source=SOURCE, reason="max_deliver_exceeded", detail=detail)
        return
    delivered = msg.raw_message.metadata.num_delivered if msg.raw_message.metadata else 1
    log.warning("will retry %s (delivery %d): %r", msg.raw_message.subject, delivered, exc)
    await msg.nack(delay=min(60.0, 0.5 * 2 ** (delivered - 1)))
