"""Interruptible waiting: for any of several events, or for a time."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable


async def wait_any(events: Iterable[asyncio.Event], seconds: float | None = None) -> None:
    """Return when any of `events` is set or after `seconds` (None: no limit), whichever is
    first."""
    waiters = [asyncio.ensure_future(event.wait()) for event in events]
    limit = None if seconds is None else max(seconds, 0.0)
    if not waiters:
        await asyncio.sleep(limit or 0.0)
        return
    try:
        await asyncio.wait(waiters, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
