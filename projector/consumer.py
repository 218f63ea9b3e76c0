"""The projector's FastStream consumer: a durable pull consumer on `wf.in.>`, explicit acks.

Ack policy, per outcome:
* decided (accepted or rejected, including duplicates) -> ack;
* malformed (bad JSON, unknown type, schema mismatch, oversized, unknown workflow)
  -> dead-letter on `wf.dlq.projector` with the reason, and terminate;
* anything else (database down, lost races, a bug) -> nak with a growing delay, and
  dead-letter with `max_deliver_exceeded` on the last permitted delivery.
"""

from __future__ import annotations

import logging

from faststream.middlewares import AckPolicy
from faststream.nats import JStream, NatsBroker, PullSub
from faststream.nats.annotations import NatsMessage
from faststream.nats.message import NatsMessage as NatsMessageType
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from contracts import subjects
from contracts.envelope import MalformedMessage, parse_envelope, utcnow
from otel.propagation import current_trace_id, extract, inject
from projector.service import NotDueYet, Projector
from projector.store.types import TraceInfo
from services.runtime.deadletter import dead_letter, is_last_delivery

log = logging.getLogger("interlock.projector")
tracer = trace.get_tracer("interlock.projector")
MAX_DELIVER = 8
"""Must equal the projector consumer's max_deliver (see interlock.streams)."""
SOURCE = "projector"


def register(broker: NatsBroker, projector: Projector, *, workers: int = 16) -> None:
    """Subscribe the projector to every inbound subject on `broker`."""

    @broker.subscriber(
        f"{subjects.IN_PREFIX}.>",
        stream=JStream(subjects.STREAM_IN, declare=False),
        durable=subjects.CONSUMER_PROJECTOR,
        pull_sub=PullSub(batch_size=max(workers * 2, 16), timeout=1.0),
        max_workers=workers,
        ack_policy=AckPolicy.MANUAL,
    )
    async def on_event(msg: NatsMessage) -> None:
        await consume(broker, projector, msg)


async def consume(broker: NatsBroker, projector: Projector, msg: NatsMessageType) -> None:
    headers = msg.raw_message.headers or {}
    with tracer.start_as_current_span(
        "interlock.projector decide", context=extract(headers), kind=SpanKind.CONSUMER
    ):
        try:
            event = parse_envelope(msg.body)
            await projector.handle(event, TraceInfo(current_trace_id(), inject()))
        except MalformedMessage as exc:
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


async def _retry_later(broker: NatsBroker, msg: NatsMessageType, exc: Exception) -> None:
    if is_last_delivery(msg, MAX_DELIVER):
        detail = f"{type(exc).__name__}: {exc}"
        await dead_letter(broker, msg, source=SOURCE, reason="max_deliver_exceeded", detail=detail)
        return
    delivered = msg.raw_message.metadata.num_delivered if msg.raw_message.metadata else 1
    log.warning("will retry %s (delivery %d): %r", msg.raw_message.subject, delivered, exc)
    await msg.nack(delay=min(60.0, 0.5 * 2 ** (delivered - 1)))
