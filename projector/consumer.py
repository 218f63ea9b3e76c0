"""The projector's consumer: a durable pull consumer on `wf.in.>`, explicit acks: `projector`,
or with several partitions the partition's own (`projector-p<k>-of-<n>`) on its own stream of
keyed messages and on the shared stream, where it acknowledges without deciding what another
partition decides (`partitioning`).

Messages of different workflows are decided concurrently; messages of one workflow are
decided one at a time, each sender's in stream order (the senders of one workflow take
turns, `dispatch`), so a command published right after a request is never decided before
it, and racing transactions on one workflow are the exception.

The messages arrive through `intake` (why not FastStream's pull subscriber: see there), and
the results stages ask the partition to decide at once through `asked`, which are settled by
answering the stage: decided, or not taken (then sent the durable way, where everything below
applies to them).

Every message ends in ack, nak or a reasoned dead letter:
* decided (accepted or rejected, including duplicates) -> ack;
* malformed (bad JSON, unknown type, schema mismatch, oversized, a NUL character, a subject
  that is not `wf.in.<kind>.<type>[.<key>][.<sender>]`, keyed or as the broker maps it;
  another partition's workflow on this partition's own stream, `partition_mismatch`) ->
  dead-letter on `wf.dlq.projector` with the reason, and terminate (with several
  partitions: the workflow's partition, or partition 0 for a message with no readable
  workflow on the shared stream, so each is dead-lettered once);
* addressed to a workflow that does not exist (yet) -> held while the message is younger
  than `Patience.unknown_workflow_grace` (its START may be behind it): kept alive and decided
  again once a decision of its workflow is accepted, or once as its grace ends (`parking`),
  then dead-letter `unknown_workflow`; at once when its sender already holds its share of
  such waiting messages (`parking`), so one sender cannot fill the consumer's in-flight limit;
* a timer firing a little before its time (clock skew within the projector's tolerance) ->
  nak until it is due; earlier than that -> dead-letter `timer_not_due`;
* a request or signal under the message id of a result or timer firing (an attempt to have
  the real one dropped as a duplicate) -> dead-letter `reserved_message_id`, naming the sender;
* refused at the door (wrong subject, a client or stage sending what it may not) -> audited
  on the workflow it addresses and acked, or dead-lettered when it addresses none;
* a dependency down (store, broker, a lost race: any retryable `InterlockError`) -> retried
  in place with a bounded, jittered backoff until it returns, the message kept alive with
  `in_progress`: never dead-lettered, and later messages of its workflow stay behind it;
* anything else (a bug) -> nak with a growing delay, and dead-letter `max_deliver_exceeded`
  once `PROJECTOR_MAX_DELIVER` deliveries have failed.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from faststream.nats import NatsBroker
from opentelemetry import trace
from opentelemetry.trace import Span

from interlock.contracts.envelope import Envelope, utcnow
from interlock.contracts.errors import InterlockError, MalformedMessage
from interlock.contracts.subjects import Inbound
from interlock.messaging.backoff import Backoff
from interlock.messaging.crashpoints import crash_point
from interlock.messaging.deadletter import (
    settle,
)
from interlock.messaging.progress import Progress
from interlock.otel.messaging import consuming, link_from
from interlock.otel.propagation import current_trace_id, inject
from interlock.projector import door
from interlock.projector.asked import is_asked, take_requests
from interlock.projector.dispatch import KeyedDispatcher, Parsed
from interlock.projector.errors import NotDueYet
from interlock.projector.intake import intake
from interlock.projector.job_questions import answer_questions
from interlock.projector.letters import Letter, refuse, retry_later
from interlock.projector.lines import lines_of
from interlock.projector.parking import Parking, sequence
from interlock.projector.partitioning import EVERYTHING, Owner
from interlock.projector.service import EventOutcome, Projector
from interlock.projector.store.types import TraceInfo

log = logging.getLogger("interlock.projector")
tracer = trace.get_tracer("interlock.projector")


@dataclass(frozen=True)
class Patience:
    """How the consumer waits out what is not the message's fault."""

    backoff: Backoff = field(default_factory=lambda: Backoff(base=0.1, cap=2.0))
    """Between attempts of a message whose dependency is down (capped low: recovery after
    an outage is at most one step late)."""
    unknown_workflow_grace: float = 30.0
    """Seconds a message may wait for its workflow to be created before it is dead-lettered
    `unknown_workflow`."""
    unknown_workflow_holds_per_sender: int = 200
    """Messages of one sender that may wait for their workflow at once (`parking`)."""
    unknown_workflow_holds: int = 1000
    """Messages of all senders together that may wait for their workflow at once, well under
    the consumer's `max_ack_pending`."""

    def parking(self) -> Parking:
        return Parking(self.unknown_workflow_holds_per_sender, self.unknown_workflow_holds)


PATIENCE = Patience()


async def run(
    broker: NatsBroker,
    projector: Projector,
    stop: asyncio.Event,
    *,
    workers: int = 16,
    patience: Patience = PATIENCE,
    progress: Progress | None = None,
    owner: Owner = EVERYTHING,
) -> None:
    """Consume until `stop` is set; the broker must be started. `owner`: the partition this
    projector is and which messages it decides (default: the one partition, all)."""
    parking = patience.parking()
    dispatcher = dispatching(
        broker, projector, parking, workers=workers, patience=patience, owner=owner
    )
    try:
        async with asyncio.TaskGroup() as group:
            nc = broker.connection
            group.create_task(take_requests(nc, dispatcher, stop, owner.partition))
            group.create_task(answer_questions(nc, projector.job_stage, stop, owner.partition))
            group.create_task(intake(nc, dispatcher, stop, owner.partition, progress))
    finally:
        await dispatcher.aclose()


def dispatching(
    broker: NatsBroker,
    projector: Projector,
    parking: Parking,
    *,
    workers: int = 16,
    patience: Patience = PATIENCE,
    owner: Owner = EVERYTHING,
) -> KeyedDispatcher:
    """The dispatcher deciding what the consumer takes: messages of a workflow in its line,
    those waiting for their workflow held by it (`parking`) and decided again aside."""
    dispatcher = KeyedDispatcher(
        lambda parsed: consume(broker, projector, parsed, patience, parking),
        workers,
        claim=owner.claim,
        line_of=lines_of(projector),
        aside_of=lambda raw: parking.waits(sequence(raw)),
    )
    parking.holder = dispatcher.hold
    return dispatcher


def _link(span: Span, headers: dict[str, str], outcome: EventOutcome) -> None:
    """A message without trace context (a person approving days later, an untraced client)
    starts a new trace, linked to the trace of the transition it answers: the one its
    workflow's checkpoint was made in, read with the checkpoint (no query of its own)."""
    if "traceparent" not in headers:
        for link in link_from(outcome.trace_before):
            span.add_link(link.context, link.attributes)


async def consume(
    broker: NatsBroker,
    projector: Projector,
    parsed: Parsed,
    patience: Patience = PATIENCE,
    parking: Parking | None = None,
) -> None:
    """Decide one message and settle it; a dependency that is down is waited out here.
    `parking`: what each sender holds waiting for a workflow (None: a fresh count)."""
    raw = parsed[0]
    parking = parking if parking is not None else patience.parking()
    if is_asked(raw):
        await _answer(broker, projector, parsed, patience, parking)
        return
    attempt = 0
    while True:
        try:
            parked = await _consume_once(broker, projector, parsed, patience, parking)
            if not parked:
                parking.release(sequence(raw))
            return
        except InterlockError as exc:
            if not exc.retryable:
                raise
            attempt += 1
            log.warning("waiting out %r for %s (attempt %d)", exc, raw.subject, attempt)
        await settle(raw.in_progress, raw.subject)
        await asyncio.sleep(patience.backoff.delay(attempt))


async def _answer(
    broker: NatsBroker, projector: Projector, parsed: Parsed, patience: Patience, parking: Parking
) -> None:
    """Decide a result request once and answer it: `decided` once settled that way, else
    `not_taken` (a dependency down included: its stage sends it the durable way, which
    waits that out)."""
    raw = parsed[0]
    try:
        await _consume_once(broker, projector, parsed, patience, parking)
    except InterlockError as exc:
        if not exc.retryable:
            raise
        log.info("result request %s not taken: %r", raw.subject, exc)
    finally:
        await settle(raw.nak, raw.subject)  # nothing if it was answered


async def _consume_once(
    broker: NatsBroker, projector: Projector, parsed: Parsed, patience: Patience, parking: Parking
) -> bool:
    """Decide and settle one message; True if it now waits for its workflow."""
    raw, event = parsed
    headers = dict(raw.headers or {})
    good = event if isinstance(event, Envelope) else None
    name = f"projector decide {good.type}" if good else "projector decide"
    message_id = good.event_id if good else None
    with consuming(tracer, name, raw.subject, headers, message_id=message_id) as span:
        inbound: Inbound | None = None
        try:
            if isinstance(event, MalformedMessage):
                door.refuse_squatting(raw.subject, headers)
                raise event
            inbound = projector.inbound(raw.subject, raw.data, headers)
            door.refuse_squatting(raw.subject, headers, inbound)
            trace_info = TraceInfo(current_trace_id(), inject())
            outcome = await projector.handle(event, trace_info, inbound=inbound)
            _link(span, headers, outcome)
            _describe(span, outcome)
            if outcome.accepted:
                crash_point("projector.after_commit")
                parking.moved((event.tenant_id, outcome.workflow_id))
        except MalformedMessage as exc:
            if is_asked(raw):  # its stage sends it the durable way, which refuses it
                await settle(raw.nak, raw.subject)
                return False
            span.set_attribute("interlock.dead_letter_reason", exc.reason)
            letter = Letter(projector, good, inbound)
            grace = patience.unknown_workflow_grace
            return await refuse(broker, raw, exc, grace, letter, parking=parking)
        except NotDueYet as exc:
            delay = (exc.retry_at - utcnow()).total_seconds()
            await settle(lambda: raw.nak(delay=min(max(delay, 0.05), 60.0)), raw.subject)
            return False
        except InterlockError as exc:
            if exc.retryable:
                raise
            await retry_later(broker, raw, exc, Letter(projector, good, inbound))
            return False
        except Exception as exc:
            await retry_later(broker, raw, exc, Letter(projector, good, inbound))
            return False
    await settle(raw.ack, raw.subject)
    return False


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
