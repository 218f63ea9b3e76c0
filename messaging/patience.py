"""Waiting out the broker: a call that failed because the broker is unreachable (restarting,
partitioned, a dropped connection) is tried again after a bounded, jittered backoff until it
succeeds, while the message being worked on is kept alive. A message is never given up on,
dead-lettered or left unacknowledged because a dependency was down."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress
from typing import TypeVar

import nats.errors

from interlock.contracts.errors import PublishFailed
from interlock.messaging.backoff import Backoff

log = logging.getLogger("interlock.messaging")
T = TypeVar("T")
BROKER_DOWN: tuple[type[BaseException], ...] = (
    nats.errors.Error,
    TimeoutError,
    OSError,
    PublishFailed,
)
"""What a call raises when the broker, not the message, is the problem."""
PATIENCE = Backoff(base=0.1, cap=2.0)


async def waited_out(
    attempt: Callable[[], Awaitable[T]],
    keep_alive: Callable[[], Awaitable[None]],
    *,
    what: str,
    backoff: Backoff = PATIENCE,
) -> T:
    """`await attempt()` until it does not fail with `BROKER_DOWN`; `keep_alive` (e.g. the
    message's `in_progress`) is called between attempts, its own failures ignored."""
    tries = 0
    while True:
        try:
            return await attempt()
        except BROKER_DOWN as exc:
            tries += 1
            log.warning("%s: waiting out the broker (%r, attempt %d)", what, exc, tries)
        with suppress(*BROKER_DOWN):
            await keep_alive()
        await asyncio.sleep(backoff.delay(tries))
