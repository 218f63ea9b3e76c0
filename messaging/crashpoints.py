"""Crash points: named places where a component can be made to die by SIGKILL, for chaos tests.

Every component crosses a few boundaries where a crash is most dangerous: a stage before its
call, after its effect but before its result, after its result but before its ack; the relay
between publishing and moving its cursor; the timer service between publishing a firing and
marking it; the projector before its (group) commit, and between its commit and its ack or
answer. Each boundary calls `crash_point(name)`. Nothing happens unless
`INTERLOCK_CRASHPOINTS` names a directory; then a file of that name in it arms the point, and
the first process to reach it removes the file (so exactly one crash per arming) and kills
itself with SIGKILL: no cleanup, no ack, as if the machine had lost power at that instant.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

ENV = "INTERLOCK_CRASHPOINTS"


def crash_point(name: str) -> None:
    """Die here, by SIGKILL, if the point `name` is armed."""
    directory = os.environ.get(ENV)
    if not directory:
        return
    try:
        (Path(directory) / name).unlink()  # atomic: one process wins the arming
    except OSError:
        return
    os.kill(os.getpid(), signal.SIGKILL)


def arm(directory: Path, name: str) -> None:
    """Arm `name` for the processes whose `INTERLOCK_CRASHPOINTS` is `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).touch()


def armed(directory: Path, name: str) -> bool:
    """Still armed: no process has reached the point yet."""
    return (directory / name).exists()
