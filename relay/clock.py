"""Time for the relay's services: an injectable clock and interruptible waiting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from datetime import datetime

Clock = Callable[[], datetime]
"""Returns the current time as an aware datetime; injected so tests control time."""


def seconds_until(moment: datetime, clock: Clock) -> float:
    """Seconds from `clock()` to `moment` (negative once it has passed)."""
    return (moment - clock()).total_seconds()


async def wait_any(events: Iterable[asyncio.Event], seconds: float) -> None:
    """Return when any of `events` is set or after `seconds`, whichever is first."""
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    if not waiters:
        await asyncio.sleep(max(seconds, 0.0))
        return
    try:
        await asyncio.wait(waiters, timeout=max(seconds, 0.0), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
