"""Bounded exponential backoff with jitter, for every retry that waits out a dependency."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Backoff:
    """Delays that double from `base` up to `cap` seconds; the random source is injectable."""

    base: float = 0.1
    cap: float = 10.0
    rng: Callable[[], float] = field(default=random.random, repr=False)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based).

        Always between half and all of `min(cap, base * 2**(attempt - 1))` ("equal jitter"):
        never zero, so a caller can never spin, and two relays failing together drift apart.
        """
        ceiling = min(self.cap, self.base * 2.0 ** min(max(attempt, 1) - 1, 32))
        return ceiling / 2 + self.rng() * ceiling / 2
