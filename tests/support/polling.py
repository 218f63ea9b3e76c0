"""Waiting for asynchronous work without sleeping blindly: poll with a deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(
    probe: Callable[[], Awaitable[T | None]],
    *,
    within: float = 15.0,
    every: float = 0.02,
    what: str = "condition",
) -> T:
    """Return the first truthy result of `probe()`, or fail after `within` seconds."""
    deadline = time.monotonic() + within
    last: T | None = None
    while time.monotonic() < deadline:
        last = await probe()
        if last:
            return last
        await asyncio.sleep(every)
    raise AssertionError(f"{what} not reached within {within}s (last: {last!r})")
