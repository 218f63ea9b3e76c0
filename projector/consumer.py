"""The projector's consumer: the durable pull consumer `projector` on `wf.in.>`, explicit acks.

Messages of different workflows are decided concurrently; messages of one workflow are
decided one at a time, in stream order, so a command published right after a request is
never decided before it, and racing transactions on one workflow are the exception.

Why not FastStream's pull subscriber: it runs the messages of one fetched batch as
concurrent tasks, which reorders messages of one workflow (measured: a quarter of them at
batch size 64), and with a batch of one it costs a round trip per message. So the projector
pulls continuously and in order itself (`messaging.pull`), on the connection of its
FastStream broker, which still owns connecting, publishing dead letters and shutting down.

Ack policy, per outcome:
* decided (accepted or rejected, including duplicates) -> ack;
* malformed (bad JSON, unknown type, schema mismatch, oversized, unknown workflow, a subject
  that is not `wf.in.<kind>.<type>[.<sender>]`) -> dead-letter on `wf.dlq.projector` with the
  reason, and terminate;
* a timer firing a little before its time (clock skew within the projector's tolerance) ->
  nak until it is due; earlier than that -> dead-letter `timer_not_due`;
* refused at the door (wrong subject, a client or stage sending what it may not) -> audited
  on the workflow it addresses and acked, or dead-lettered when it addresses none;
* anything else (database down, lost races, a bug) -> nak with a growing delay, and
  dead-letter with `max_deliver_exceeded` on the last permitted delivery.
"""

from __future__ import annotations

import asyncio
import logging

from faststream.nats import NatsBroker
from nats.aio.client import Client
from nats.aio.msg import Msg
from opentelemetry import trace
from opentelemetry.trace import Link, Span

from interlock.contracts import subjects
from interlock.contracts.envelope import Envelope, utcnow
from interlock.contracts.errors import MalformedMessage, described
from interlock.messaging.deadletter import (
    dead_letter,
    deliveries,
    is_last_delivery,
    redelivery_delay,
)
from interlock.messaging.pull import PullConsumer
from interlock.otel.messaging import consuming, link_from
from interlock.otel.propagation import current_trace_id, inject
from interlock.projector.dispatch import KeyedDispatcher, Parsed
from interlock.projector.errors import NotDueYet
from interlock.projector.service import EventOutcome, Projector
from interlock.projector.store.types import TraceInfo

log = logging.getLogger("interlock.projector")
tracer = trace.get_tracer("interlock.projector")
SOURCE = "projector"
PULL_BATCH = 256


async def run(
    broker: NatsBroker, projector: Projector, stop: asyncio.Event, *, workers: int = 16
) -> None:
    """Consume until `stop` is set; the broker must be started."""
    dispatcher = KeyedDispatcher(lambda parsed: consume(broker, projector, parsed), workers)
    try:
        await fetch_in_order(broker.connection, dispatcher, stop)
    finally:
        await dispatcher.aclose()


async def fetch_in_order(nc: Client, dispatcher: KeyedDispatcher, stop: asyncio.Event) -> None:
    """Hand every inbound message to the dispatcher in stream order, as it arrives."""
    consumer = PullConsumer(
        nc, subjects.STREAM_IN, subjects.CONSUMER_PROJECTOR, batch=PULL_BATCH, expires=2.0
    )
    async for msg in consumer.messages(stop):
        await dispatcher.submit(msg)


async def _links(
    projector: Projector, headers: dict[str, str], event: Envelope | None
) -> tuple[Link, ...]:
    """A message without trace context (a person approving days later, an untraced client)
    starts a new trace, linked to the trace of the transition it answers."""
    if "traceparent" in headers or event is None or not event.workflow_id:
        return ()
    return link_from(await projector.trace_headers(event.tenant_id, event.workflow_id))


async def consume(broker: NatsBroker, projector: Projector, parsed: Parsed) -> None:
    raw, event = parsed
    headers = dict(raw.headers or {})
    good = event if isinstance(event, Envelope) else None
    name = f"projector decide {good.type}" if good else "projector decide"
    links = await _links(projector, headers, good)
    with consuming(
        tracer, name, raw.subject, headers, links=links, message_id=good.event_id if good else None
    ) as span:
        try:
            if isinstance(event, MalformedMessage):
                raise event
            inbound = subjects.parse_inbound(raw.subject)
            trace_info = TraceInfo(current_trace_id(), inject())
            outcome = await projector.handle(event, trace_info, inbound=inbound)
            _describe(span, outcome)
        except MalformedMessage as exc:
            span.set_attribute("interlock.dead_letter_reason", exc.reason)
            await dead_letter(broker, raw, source=SOURCE, reason=exc.reason, detail=exc.detail)
            return
        except NotDueYet as exc:
            delay = (exc.retry_at - utcnow()).total_seconds()
            await raw.nak(delay=min(max(delay, 0.05), 60.0))
            return
        except Exception as exc:
            await _retry_later(broker, raw, exc)
            return
    await raw.ack()


def _describe(span: Span, outcome: EventOutcome) -> None:
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


async def _retry_later(broker: NatsBroker, raw: Msg, exc: Exception) -> None:
    if is_last_delivery(raw, subjects.PROJECTOR_MAX_DELIVER):
        detail = described(exc)
        await dead_letter(broker, raw, source=SOURCE, reason="max_deliver_exceeded", detail=detail)
        return
    delivered = deliveries(raw)
    log.warning("will retry %s (delivery %d): %s", raw.subject, delivered, described(exc))
    await raw.nak(delay=redelivery_delay(raw, 0.5))
