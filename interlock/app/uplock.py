"""One `interlock up` per home: a second would share the first's consumers and log files
and fight over the gateway's port. The lock is an `flock` on `<home>/up.lock`, which the
kernel releases when its holder dies, so a crashed `up` never leaves a stale lock; the file
names the holder's pid for the message."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from interlock.contracts.errors import ConfigurationError

LOCK = "up.lock"


@contextmanager
def only_up(home: Path) -> Iterator[None]:
    """Hold the home's `up` lock for the duration; `ConfigurationError` naming the holder's
    pid if another process holds it."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / LOCK
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "?"
            raise ConfigurationError(
                f"another `interlock up` (pid {holder}) is running on {home.resolve()}",
                hint=f"stop it (kill -INT {holder}), or set INTERLOCK_HOME to another directory",
            ) from None
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(descriptor)
