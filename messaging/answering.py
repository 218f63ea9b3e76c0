"""Serving core NATS requests on a set of subjects in one queue group until told to stop: the
projector's result requests and job questions alike."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from contextlib import suppress

from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.aio.subscription import DEFAULT_SUB_PENDING_BYTES_LIMIT, DEFAULT_SUB_PENDING_MSGS_LIMIT


async def serving(
    nc: Client,
    subjects: Iterable[str],
    cb: Callable[[Msg], Awaitable[None]],
    stop: asyncio.Event,
    *,
    queue: str,
    pending: int = DEFAULT_SUB_PENDING_MSGS_LIMIT,
    pending_bytes: int = DEFAULT_SUB_PENDING_BYTES_LIMIT,
) -> None:
    """Hand every message on `subjects` (one subscription each, in `queue`) to `cb` until
    `stop`, then unsubscribe. `pending`, `pending_bytes`: what each subscription holds
    unhandled before the client drops the next."""
    subscriptions = [
        await nc.subscribe(
            subject,
            queue=queue,
            cb=cb,
            pending_msgs_limit=pending,
            pending_bytes_limit=pending_bytes,
        )
        for subject in subjects
    ]
    try:
        await stop.wait()
    finally:
        for subscription in subscriptions:
            with suppress(Exception):  # the connection may be closing already
                await subscription.unsubscribe()
