"""Checking console passwords off the event loop, a bounded number at a time.

An argon2id check costs ~90 ms of CPU and 64 MiB. Run on the console's event loop, a stream of
logins under fresh names (each has its free attempts) stopped the console answering anyone
else: ten a second kept it busy. Each check now runs in a worker thread (the hash releases the
interpreter's lock), at most `limit` at a time; a login beyond them is refused at once as busy,
never queued, so neither the CPU nor the memory the checks take grows with the attackers'.

One name from one client is never checked twice at once: the limiter's delay is read before
a check and the outcome recorded after it, so concurrent guesses of one name would all pass
the same reading. A second attempt while the first is being checked is refused at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

from interlock.console.errors import Busy
from interlock.console.limiter import limit_key

T = TypeVar("T")
CHECKS_AT_ONCE = 2
"""Password checks under way at once, console-wide (this many cores' worth at most)."""


class PasswordChecks:
    def __init__(self, limit: int = CHECKS_AT_ONCE) -> None:
        if limit < 1:
            raise ValueError("a console needs at least one password check at a time")
        self._limit = limit
        self._under_way: set[tuple[str, str]] = set()

    async def run(self, name: str, address: str, check: Callable[[], T]) -> T:
        """`check()` in a worker thread, as the one check of `name` from `address`; raises
        `Busy` at once when one is already under way or `limit` others are."""
        key = limit_key(name, address)
        if key in self._under_way:
            raise Busy("an attempt of this name from here is being checked")
        if len(self._under_way) >= self._limit:
            raise Busy("the console is busy checking other logins")
        self._under_way.add(key)
        try:
            return await asyncio.to_thread(check)
        finally:
            self._under_way.discard(key)
