"""`interlock up` as a subprocess for end-to-end tests, and the CLI run without blocking the
event loop (services the test serves keep answering meanwhile)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager


@contextmanager
def interlock_up(env: dict[str, str], only: Sequence[str]) -> Iterator[str]:
    """Run `interlock up --only …` on the stack of `env` until the block ends; yields what it
    printed up to its ready line."""
    up = subprocess.Popen(
        [sys.executable, "-m", "interlock", "up", *(f"--only={n}" for n in only)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert up.stdout is not None
        seen = []
        for line in up.stdout:  # `up` says so once every component is ready
            seen.append(line)
            if "Ctrl-C stops everything" in line:
                break
        assert up.poll() is None, "".join(seen)
        yield "".join(seen)
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(60)


async def cli(env: dict[str, str], *args: str, within: float = 120) -> tuple[int, str]:
    """Exit code and output (stdout, else stderr) of `interlock ARGS`."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "interlock",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), within)
    assert process.returncode is not None
    return process.returncode, out.decode() or err.decode()
