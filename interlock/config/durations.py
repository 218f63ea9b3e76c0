"""Durations as operators type them (`--since`): `90s`, `15m`, `2h`, `1d`, `1w` or a sum of
them (`1h30m`), positive. One reading for every command that takes one (`interlock costs`, the
bulk selections), so the same text means the same span everywhere."""

from __future__ import annotations

import re
from datetime import timedelta

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_PART = re.compile(r"(\d+)([smhdw])")


def parse_duration(text: str, option: str = "--since") -> timedelta:
    """The duration `text` names; `ValueError` (one line naming `option`) otherwise."""
    cleaned = text.strip().lower()
    parts = _PART.findall(cleaned)
    if not parts or "".join(n + u for n, u in parts) != cleaned:
        raise ValueError(f"{option} {text!r}: expected a duration such as 90s, 15m, 2h, 1d")
    seconds = sum(int(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise ValueError(f"{option} {text!r}: the duration must be positive")
    return timedelta(seconds=seconds)
