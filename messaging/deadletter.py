"""Dead-lettering: a message that can never be processed is moved aside with its reason.

The original body (up to `MAX_KEPT_BODY` bytes; a larger one is left out and only its size
kept) and headers are kept; the reason, a short detail and the original subject travel in
`Interlock-Dlq-*` headers on `wf.dlq.<source>`. The original is then terminated so it never
blocks the stream or loops through redeliveries. Only the message's own fault (malformed,
permanently unprocessable) is a reason: a dependency that is down is waited out.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from faststream.nats import NatsBroker
from nats.aio.msg import Msg

from interlock.contracts import subjects
from interlock.contracts.errors import PublishFailed
from interlock.otel import metrics

log = logging.getLogger("interlock.dlq")
_MAX_DETAIL = 1000
MAX_KEPT_BODY = 64 * 1024
"""A dead letter keeps the body it refused up to this size: enough to read and redrive any
message worth deciding (they carry references, not blobs), not enough for a flood of large
messages to fill the dead-letter stream."""


async def dead_letter(
    broker: NatsBroker, raw: Msg, *, source: str, reason: str, detail: str
) -> None:
    """Publish `raw` to `wf.dlq.<source>` with its reason, then terminate the original.

    Raises `PublishFailed` when the broker did not take the dead letter: the original is
    then left as it is, to be dead-lettered again once the broker is back."""
    headers = {k: v for k, v in (raw.headers or {}).items() if k != subjects.HEADER_MSG_ID}
    # One letter per stored message: its stream, sequence and time stored (a projector
    # partition reads two streams, whose sequences overlap, and a stream made again after a
    # change of partition count numbers its messages from 1 again).
    stream = raw.metadata.stream if raw.metadata else None
    sequence = raw.metadata.sequence.stream if raw.metadata else None
    stored = raw.metadata.timestamp if raw.metadata else None
    when = f"{stored.timestamp():.6f}" if stored else "-"
    headers |= {
        subjects.HEADER_DLQ_REASON: reason,
        subjects.HEADER_DLQ_DETAIL: detail[:_MAX_DETAIL],
        subjects.HEADER_DLQ_SUBJECT: raw.subject,
        subjects.HEADER_MSG_ID: f"dlq-{source}-{stream}-{sequence}-{when}",
    }
    body = raw.data
    if len(body) > MAX_KEPT_BODY:
        headers[subjects.HEADER_DLQ_BODY_BYTES] = str(len(body))
        body = b""
    try:
        await broker.publish(
            body, subjects.dlq(source), headers=headers, stream=subjects.STREAM_DLQ
        )
    except Exception as exc:
        raise PublishFailed(f"dead letter from {source} not stored: {exc!r}") from exc
    log.warning("dead-lettered %s from %s: %s", raw.subject, source, reason)
    metrics.dead_letter(source, reason)
    await settle(raw.term, raw.subject)


async def settle(ending: Callable[[], Awaitable[None]], subject: str) -> None:
    """Send an ack, nak or term; on a lost connection the server redelivers the message
    after its ack wait, which every consumer already handles (deduplication)."""
    try:
        await ending()
    except Exception as exc:
        log.warning("could not settle a message of %s (%r); it will be redelivered", subject, exc)


def deliveries(raw: Msg) -> int:
    """How many times this message has been delivered, this delivery included."""
    return raw.metadata.num_delivered if raw.metadata else 1


MAX_REDELIVERY_DELAY = 60.0
"""Longest wait (seconds) before a redelivery, whatever the failure or the system asked for."""


def redelivery_delay(raw: Msg, first: float, asked: float | None = None) -> float:
    """Seconds to wait before the next delivery: `first`, doubling per delivery, but at least
    `asked` (what the failing system asked for, e.g. its `Retry-After`); at most 60."""
    backoff = first * 2.0 ** (deliveries(raw) - 1)
    return min(MAX_REDELIVERY_DELAY, max(backoff, asked or 0.0))


def is_last_delivery(raw: Msg, max_deliver: int) -> bool:
    """True when a failure now would exhaust the consumer's redeliveries."""
    return deliveries(raw) >= max_deliver
