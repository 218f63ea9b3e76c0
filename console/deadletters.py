"""Dead letters for the operations page: the newest, read (never consumed) through the same
code as `interlock dlq list`, and redriven one at a time as `interlock dlq redrive` does
(same event id, so a duplicate is still decided once). Bodies are not shown: they may hold
payload values."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import nats
from nats.errors import Error as NatsError
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from interlock.console.errors import Unavailable
from interlock.contracts import subjects
from interlock.contracts.urls import nats_inbox, nats_servers
from interlock.messaging import letters

log = logging.getLogger("interlock.console")
T = TypeVar("T")


@asynccontextmanager
async def _stream(nats_url: str) -> AsyncIterator[JetStreamContext]:
    try:
        nc = await nats.connect(
            nats_servers(nats_url),
            name="interlock-console",
            inbox_prefix=nats_inbox(nats_url),
            connect_timeout=2,
            max_reconnect_attempts=0,
        )
    except (OSError, NatsError, TimeoutError) as exc:
        raise Unavailable(f"broker unreachable: {type(exc).__name__}") from None
    try:
        yield nc.jetstream(timeout=3)
    finally:
        await nc.close()


async def _on_broker(nats_url: str, work: Callable[[JetStreamContext], Awaitable[T]]) -> T:
    async with _stream(nats_url) as js:
        try:
            return await work(js)
        except (NatsError, TimeoutError) as exc:
            # Permissions the console's identity lacks surface as timeouts or errors.
            raise Unavailable(f"refused or unanswered: {type(exc).__name__}") from None


async def newest(nats_url: str, limit: int = 20) -> dict[str, Any]:
    """`{"total", "letters": [summary as `dlq list --json` gives it]}`, newest first;
    `{"error": ...}` too when the broker cannot be asked."""

    async def read(js: JetStreamContext) -> dict[str, Any]:
        try:
            state = (await js.stream_info(subjects.STREAM_DLQ)).state
        except NotFoundError:  # nothing provisioned: nothing dead-lettered either
            return {"total": 0, "letters": []}
        found = []
        oldest = max(state.first_seq, state.last_seq - limit + 1, 1)
        for sequence in range(state.last_seq, oldest - 1, -1):
            letter = await letters.letter(js, sequence)
            if letter is not None:
                found.append(letter.summary())
        return {"total": state.messages, "letters": found}

    try:
        return await _on_broker(nats_url, read)
    except Unavailable as exc:
        return {"total": 0, "letters": [], "error": str(exc)}


async def redrive(nats_url: str, letter_id: int, operator: str) -> str | None:
    """Send dead letter `letter_id` back to its subject; None when done, else why not."""

    async def send(js: JetStreamContext) -> str | None:
        found = await letters.letter(js, letter_id)
        if found is None:
            return f"no dead letter {letter_id} (already redriven?)"
        why_not = found.not_redrivable()
        if why_not is not None:
            return why_not
        await letters.redrive(js, found)
        log.info(
            "dead letter %s (%s from %s) redriven by %s",
            letter_id,
            found.reason,
            found.source,
            operator,
        )
        return None

    try:
        return await _on_broker(nats_url, send)
    except Unavailable as exc:
        return f"the broker did not take it ({exc})"
