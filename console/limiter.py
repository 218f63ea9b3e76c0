"""The console's login limit: progressive delays per (name, client address), in bounded memory.

After `free` consecutive failed logins of one name from one address, the next attempt must
wait `min(cap, base * 2 ** (failures - free))` seconds from the last failure before its
password is even checked (the login page answers 429 with `Retry-After` meanwhile). Once the
wait is over the right password logs in and clears the failures: there is no lockout, and
nobody else waits — not the same name from another address, not another name behind the same
proxy. The hosts of one IPv6 /64 count as one client address.

Memory is bounded whatever arrives: at most `max_entries` entries (the least recently failed
is evicted first, but an entry whose wait was counted only once no other is left), each
forgotten `forget_after` seconds after its last failure (never before its wait is over), and
a name longer than `MAX_NAME_LENGTH` is refused before it is looked up or stored.
"""

from __future__ import annotations

import ipaddress
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

MAX_NAME_LENGTH = 200
"""Longer names are nobody's: refused at once, never stored."""
MAX_ADDRESS_LENGTH = 64
"""An IPv6 address with a zone fits; anything longer is cut (it only keys the limit)."""
_MAX_DOUBLINGS = 64


@dataclass
class _Failures:
    count: int
    last: float


class LoginLimiter:
    def __init__(
        self,
        *,
        free: int = 5,
        base: float = 1.0,
        cap: float = 300.0,
        max_entries: int = 10_000,
        forget_after: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.free, self.base, self.cap = free, base, cap
        self.max_entries = max_entries
        self.forget_after = max(forget_after, cap)
        self._clock = clock
        # Each ordered by last failure, oldest first: pruning and eviction pop from the front.
        # Entries not yet waiting (fewer than `free` failures) are evicted before any whose
        # wait was counted, so failing other names cannot buy a guesser a fresh count.
        self._counting: OrderedDict[tuple[str, str], _Failures] = OrderedDict()
        self._waiting: OrderedDict[tuple[str, str], _Failures] = OrderedDict()

    def __len__(self) -> int:
        return len(self._counting) + len(self._waiting)

    def delay(self, failures: int) -> float:
        """How long the next attempt waits after `failures` consecutive failures."""
        if failures < self.free:
            return 0.0
        return min(self.cap, self.base * 2.0 ** min(failures - self.free, _MAX_DOUBLINGS))

    def retry_after(self, name: str, address: str) -> float:
        """Seconds before `name` may be tried from `address` again (0: now)."""
        now = self._clock()
        self._prune(now)
        entry = self._waiting.get(limit_key(name, address))
        if entry is None:
            return 0.0
        return max(0.0, entry.last + self.delay(entry.count) - now)

    def failed(self, name: str, address: str) -> None:
        """Record a failed login (a name over `MAX_NAME_LENGTH` is not recorded)."""
        if len(name) > MAX_NAME_LENGTH:
            return
        now = self._clock()
        self._prune(now)
        key = limit_key(name, address)
        entry = self._counting.pop(key, None) or self._waiting.pop(key, None) or _Failures(0, now)
        entry.count, entry.last = entry.count + 1, now
        (self._waiting if entry.count >= self.free else self._counting)[key] = entry
        while len(self) > self.max_entries:
            # never the entry just recorded while another can go: the failure always counts
            only_this = len(self._counting) == 1 and key in self._counting
            (self._waiting if only_this and self._waiting else self._counting).popitem(last=False)

    def succeeded(self, name: str, address: str) -> None:
        key = limit_key(name, address)
        self._counting.pop(key, None)
        self._waiting.pop(key, None)

    def _prune(self, now: float) -> None:
        for entries in (self._counting, self._waiting):
            while entries:
                oldest = next(iter(entries.values()))
                if oldest.last > now - self.forget_after:
                    break
                entries.popitem(last=False)


def limit_key(name: str, address: str) -> tuple[str, str]:
    """What one login's attempts are counted under: the name and the client it comes from."""
    return name, client_of(address[:MAX_ADDRESS_LENGTH])


def client_of(address: str) -> str:
    """The client an address stands for: an IPv6 address's /64 (one host's network, whose
    2**64 addresses would each buy free attempts), an IPv4-mapped one's IPv4 address, and
    anything else (an IPv4 address, "unknown") as it is."""
    try:
        parsed = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)
