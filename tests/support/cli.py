"""The environment a test gives an `interlock` CLI subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

KEPT = ("INTERLOCK_SECRETS_DIR",)
"""The session's credentials (see tests/conftest.py): the servers of the session need them."""


def cli_env(home: Path, **overrides: str) -> dict[str, str]:
    """This process's environment without its `INTERLOCK_*` settings (but the session's
    secrets), with `INTERLOCK_HOME` set to `home` and any `overrides` (e.g.
    `INTERLOCK_NATS_URL=...`) on top."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTERLOCK_") or k in KEPT}
    env["INTERLOCK_HOME"] = str(home)
    env.update(overrides)
    return env


@contextmanager
def interlock_up(home: Path, *only: str, **env: str) -> Iterator[str]:
    """`interlock up --only …` under `home` until the block ends; yields what it printed
    up to its "Ctrl-C stops everything" line (printed once every component is ready)."""
    arguments = [a for name in only for a in ("--only", name)]
    up = subprocess.Popen(
        [sys.executable, "-m", "interlock", "up", *arguments],
        env=cli_env(home, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert up.stdout is not None
        seen = []
        for line in up.stdout:
            seen.append(line)
            if "Ctrl-C stops everything" in line:
                break
        assert up.poll() is None, "".join(seen)
        yield "".join(seen)
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(60)
