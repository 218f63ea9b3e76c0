"""A bound on how often one kind of log line is written.

Every refusal, dead letter and retry is logged, so whoever can send messages decides how many
lines the components write: a hostile run's 200 messages a second wrote 120 lines a second into
the projector's log, one per message, with no end but the disk. Each refusal is recorded
where it belongs (the audit, the dead letters, the metrics), so the log needs only enough
lines to show what is happening: at most `per_window` records of one kind per `window`
seconds. A kind is the logging call that made the record (its logger, level, file and line),
whatever values it filled in: a library's access log formats each line before logging it,
and so would a flood's line if keyed by its text. The first record of a kind after some were
left out says how many, so no flood goes unnoticed.

The number of kinds kept is bounded too (`max_kinds`): past it, kinds whose window has ended
are forgotten, and a new kind is let through uncounted until there is room.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

PER_WINDOW = 20
WINDOW_S = 10.0
MAX_KINDS = 1000

Kind = tuple[str, int, str, int]
"""The logging call that made a record: its logger, level, file and line."""


@dataclass
class _Count:
    started: float
    written: int = 0
    left_out: int = 0


@dataclass(eq=False)
class RepeatBound(logging.Filter):
    per_window: int = PER_WINDOW
    window: float = WINDOW_S
    max_kinds: int = MAX_KINDS
    clock: Callable[[], float] = time.monotonic
    _counts: dict[Kind, _Count] = field(default_factory=dict)
    _lock: threading.RLock = field(default_factory=threading.RLock)
    """Records come from the event loop and from worker threads (span export, `to_thread`);
    reentrant, as logging's own handler lock, should a record be made while one is counted."""

    def __post_init__(self) -> None:
        super().__init__()

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            return self._admit(record)

    def _admit(self, record: logging.LogRecord) -> bool:
        now = self.clock()
        kind = (record.name, record.levelno, record.pathname, record.lineno)
        count = self._counts.get(kind)
        if count is None or now - count.started >= self.window:
            if count is None and not self._room(now):
                return True
            left_out = count.left_out if count is not None else 0
            count = self._counts[kind] = _Count(now)
            if left_out:
                _note(record, left_out, self.window)
        if count.written >= self.per_window:
            count.left_out += 1
            return False
        count.written += 1
        return True

    def _room(self, now: float) -> bool:
        """Whether another kind may be counted (forgetting the ended ones when full)."""
        if len(self._counts) < self.max_kinds:
            return True
        self._counts = {k: c for k, c in self._counts.items() if now - c.started < self.window}
        return len(self._counts) < self.max_kinds


def _note(record: logging.LogRecord, left_out: int, window: float) -> None:
    """Add to `record` how many records of its kind were left out before it."""
    record.msg = f"{record.msg} [{left_out} more like this not logged in the {window:.0f} s before]"
