"""Time for the relay's services: an injectable clock (interruptible waiting is
`messaging.waiting`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

Clock = Callable[[], datetime]
"""Returns the current time as an aware datetime; injected so tests control time."""


def seconds_until(moment: datetime, clock: Clock) -> float:
    """Seconds from `clock()` to `moment` (negative once it has passed)."""
    return (moment - clock()).total_seconds()
