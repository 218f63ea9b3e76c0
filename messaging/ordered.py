"""Publishing what a commit decided, in order, under message ids: the one publisher of the
projector (right after its commit, `projector.outbox`), the relay (its backstop,
`relay.relay`) and the timer service (due firings, `relay.timers`).

Each message carries its `Nats-Msg-Id`, so one sent twice (by the projector and then the
relay, or again after a crash) is stored once by the stream's duplicate window. The caller
learns the longest prefix JetStream acknowledged; what follows a failure may have been stored
as well, and sending it again is deduplicated.

The head may go alone (`head_alone`): a message that keeps failing then stays at the head of
every retry with nothing sent behind it, and the first request on a connection, which sets up
nats-py's shared reply subscription (an await before its PUB is buffered), races no other. The
rest are pipelined: asyncio starts the coroutines in order and each appends its PUB to the
client's write buffer before it first waits, so they leave in the order given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nats.js import JetStreamContext
from nats.js.api import PubAck

from interlock.contracts import subjects
from interlock.otel.messaging import producer

Done = Callable[[PubAck | BaseException], None]
"""Told how one message's publish ended."""
Observe = Callable[[int, "Outgoing"], Done]
"""Called just before message i is sent (it may add to its headers, e.g. a `traceparent`);
returns what to tell how it ended."""


@dataclass(frozen=True, slots=True)
class Outgoing:
    subject: str
    headers: dict[str, str]
    """Its `Nats-Msg-Id` among them."""
    body: bytes


@dataclass(frozen=True, slots=True)
class Published:
    acked: int
    """messages[:acked] are stored in their streams."""
    error: BaseException | None = None
    """Why messages[acked] is not (None when all are)."""
    acks: tuple[PubAck, ...] = ()
    """The acknowledgements of the acked prefix."""


def _untold(_: PubAck | BaseException) -> None:
    return None


def traced(
    tracer_name: str, subject: str, headers: dict[str, str], attributes: Mapping[str, Any]
) -> Done:
    """A PRODUCER span for a message to `subject` continuing the trace its `headers` carry
    (none without; its own context replaces it there), ended by what the returned function
    is told."""
    end = producer(
        tracer_name,
        subject,
        headers,
        message_id=headers.get(subjects.HEADER_MSG_ID),
        template=subjects.template(subject),
        attributes=attributes,
    )
    if end is None:
        return _untold

    def done(outcome: PubAck | BaseException) -> None:
        if isinstance(outcome, BaseException):
            end(outcome, False)
        else:
            end(None, bool(outcome.duplicate))

    return done


class OrderedPublisher:
    def __init__(self, js: JetStreamContext, *, timeout: float | None = None) -> None:
        """`timeout`: seconds to wait for each acknowledgement (None: the client's)."""
        self._js = js
        self._timeout = timeout

    async def publish(
        self,
        messages: Sequence[Outgoing],
        observe: Observe | None = None,
        *,
        head_alone: bool = True,
    ) -> Published:
        """Publish `messages` in order; the acknowledged prefix, and why it ends early."""
        if not messages:
            return Published(0)
        sends: list[Coroutine[Any, Any, PubAck]] = [
            self._send(i, m, observe) for i, m in enumerate(messages)
        ]
        if not head_alone:
            return _prefix(await asyncio.gather(*sends, return_exceptions=True))
        head = _prefix(await asyncio.gather(sends[0], return_exceptions=True))
        if head.error is not None:
            for unsent in sends[1:]:
                unsent.close()
            return head
        rest = _prefix(await asyncio.gather(*sends[1:], return_exceptions=True))
        return Published(1 + rest.acked, rest.error, head.acks + rest.acks)

    async def _send(self, index: int, message: Outgoing, observe: Observe | None) -> PubAck:
        done = observe(index, message) if observe is not None else _untold
        try:
            ack = await self._js.publish(
                message.subject, message.body, timeout=self._timeout, headers=message.headers
            )
        except BaseException as exc:
            done(exc)
            raise
        done(ack)
        return ack


def _prefix(results: Sequence[PubAck | BaseException]) -> Published:
    acks: list[PubAck] = []
    for result in results:
        if isinstance(result, BaseException):
            return Published(len(acks), result, tuple(acks))
        acks.append(result)
    return Published(len(acks), None, tuple(acks))
