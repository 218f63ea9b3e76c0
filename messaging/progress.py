"""A component's own account of its health, for `interlock health NAME`.

A live process is not enough: a client that gave up reconnecting, or a loop stuck behind a
dead connection, keeps the process running while nothing moves. So each component records
whether its broker connection is up and when it last made progress (the relay's last pass,
a consumer's last answer from the server), and writes that every few seconds to
`<home>/health/<name>.json`; the health check reads the file in the same home (the same
container under compose) and judges it.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

WRITE_EVERY_S = 2.0


@dataclass
class Report:
    """What one report says."""

    pid: int
    written_at: float
    progress_at: float
    connected: bool

    def verdict(self, now: float, *, stalled_after: float) -> tuple[bool, str]:
        """(healthy, why) for a report read at `now` (wall-clock seconds)."""
        if now - self.written_at > 5 * WRITE_EVERY_S:
            return False, f"no report for {now - self.written_at:.0f}s (process gone or stuck)"
        if not self.connected:
            return False, "not connected to the broker"
        idle = now - self.progress_at
        if idle > stalled_after:
            return False, f"no progress for {idle:.0f}s"
        return True, f"connected, last progress {idle:.1f}s ago"


class Progress:
    """Written by one component; `advanced()` on every sign of life of its work."""

    def __init__(self, path: Path | None, connected: Callable[[], bool] = lambda: True) -> None:
        self._path = path
        self._connected = connected
        self._connection_is_progress = False
        self._at = time.time()

    @classmethod
    def of(cls, home: Path, name: str) -> Progress:
        return cls(report_path(home, name))

    def watch(self, connected: Callable[[], bool], *, connection_is_progress: bool = False) -> None:
        """Judge the connection by `connected` from now on; for a component that only
        answers requests, `connection_is_progress` counts a live connection as progress."""
        self._connected = connected
        self._connection_is_progress = connection_is_progress

    def advanced(self) -> None:
        self._at = time.time()

    def report(self) -> Report:
        now, connected = time.time(), self._connected()
        if connected and self._connection_is_progress:
            self._at = now
        return Report(os.getpid(), now, self._at, connected)

    async def run(self, stop: asyncio.Event) -> None:
        """Write a report every `WRITE_EVERY_S` seconds until `stop` is set."""
        if self._path is None:
            return
        self._path.parent.mkdir(parents=True, exist_ok=True)
        while not stop.is_set():
            partial = self._path.with_suffix(".partial")
            with suppress(OSError):
                partial.write_text(json.dumps(self.report().__dict__))
                partial.replace(self._path)
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), WRITE_EVERY_S)


def report_path(home: Path, name: str) -> Path:
    return home / "health" / f"{name}.json"


def read_report(home: Path, name: str) -> Report | None:
    try:
        return Report(**json.loads(report_path(home, name).read_text()))
    except (OSError, ValueError, TypeError):
        return None
