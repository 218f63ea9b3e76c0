"""How much the gateway accepts: each sender its own rate, and all traffic that fails
authentication one shared rate. Beyond a rate a request is refused with 429 before any
further work, and is not recorded on `wf.dlq.gateway` (only counted), so a flood can grow
neither the dead-letter stream nor the log."""

from __future__ import annotations

from dataclasses import dataclass, field

from aiolimiter import AsyncLimiter


@dataclass(frozen=True)
class Limits:
    per_sender: float = 20.0
    """Requests a second accepted from one authenticated sender."""
    unauthenticated: float = 5.0
    """Requests a second failing authentication that are answered and recorded."""


@dataclass
class RateLimits:
    limits: Limits
    _senders: dict[str, AsyncLimiter] = field(default_factory=dict)
    _unauthenticated: AsyncLimiter | None = None

    async def sender_allows(self, sender: str) -> bool:
        """Take one request from `sender`'s budget (an authenticated, configured sender)."""
        limiter = self._senders.get(sender)
        if limiter is None:
            limiter = self._senders[sender] = AsyncLimiter(self.limits.per_sender, 1.0)
        return await _take(limiter)

    async def unauthenticated_allows(self) -> bool:
        """Take one request from the budget all unauthenticated traffic shares."""
        if self._unauthenticated is None:
            self._unauthenticated = AsyncLimiter(self.limits.unauthenticated, 1.0)
        return await _take(self._unauthenticated)


async def _take(limiter: AsyncLimiter) -> bool:
    if not limiter.has_capacity():
        return False
    await limiter.acquire()  # returns at once: there is capacity, and nothing awaits between
    return True
