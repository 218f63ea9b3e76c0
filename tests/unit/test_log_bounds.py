"""What senders provoke is logged within a bound: at most a few records of one kind (the
logging call that made them: logger, level, file and line) per window, the first one after a
flood saying how many were left out, and a bounded number of kinds remembered. Without it,
every hostile message the projector refused wrote a line of its own, as fast as the attacker
sent them."""

from __future__ import annotations

import logging

from interlock.app.log_bounds import RepeatBound
from interlock.app.options import configure_logging


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _record(
    msg: str, *args: object, name: str = "interlock.dlq", line: int = 1
) -> logging.LogRecord:
    """A record made by the logging call at `line` of this file."""
    return logging.LogRecord(name, logging.WARNING, __file__, line, msg, args, None)


DEAD_LETTERED = "dead-lettered %s from %s: %s"


def test_a_flood_of_one_kind_is_logged_a_few_times_a_window_then_counted() -> None:
    clock = Clock()
    bound = RepeatBound(per_window=3, window=10.0, clock=clock)
    passed = [bound.filter(_record(DEAD_LETTERED, f"wf.in.{n}", "projector", "bad_json"))
              for n in range(10)]  # fmt: skip
    assert passed == [True] * 3 + [False] * 7

    clock.now = 10.0
    after = _record(DEAD_LETTERED, "wf.in.x", "projector", "bad_json")
    assert bound.filter(after)
    assert after.getMessage() == (
        "dead-lettered wf.in.x from projector: bad_json "
        "[7 more like this not logged in the 10 s before]"
    )


def test_kinds_are_counted_apart_by_logging_call_level_and_logger() -> None:
    bound = RepeatBound(per_window=1, window=10.0, clock=Clock())
    assert bound.filter(_record(DEAD_LETTERED, "a", "b", "c"))
    assert not bound.filter(_record(DEAD_LETTERED, "d", "e", "f"))  # same kind, new values
    # A line formatted before it is logged (an access log, an f-string) is the same kind.
    assert not bound.filter(_record("dead-lettered wf.in.x from projector: bad_json"))
    assert bound.filter(_record("rejected %s on %s: %s", "a", "b", "c", line=2))
    assert bound.filter(_record(DEAD_LETTERED, "a", "b", "c", name="interlock.relay"))
    error = _record(DEAD_LETTERED, "a", "b", "c")
    error.levelno = logging.ERROR
    assert bound.filter(error)


def test_the_kinds_remembered_are_bounded() -> None:
    clock = Clock()
    bound = RepeatBound(per_window=1, window=10.0, max_kinds=5, clock=clock)
    for n in range(50):  # fifty logging calls
        assert bound.filter(_record(f"line {n}", line=n))
    assert len(bound._counts) == 5

    clock.now = 10.0  # the window has ended for every kind: forgotten to make room
    assert bound.filter(_record("a new kind", line=99))
    assert len(bound._counts) == 1


def test_components_log_through_the_bound_and_debug_logs_everything() -> None:
    root = logging.getLogger()
    kept = root.handlers[:]
    try:
        for level, bounded in (("INFO", True), ("DEBUG", False)):
            root.handlers = []
            configure_logging(level)
            (handler,) = root.handlers
            assert any(isinstance(f, RepeatBound) for f in handler.filters) is bounded
    finally:
        root.handlers = kept
