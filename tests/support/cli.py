"""The environment a test gives an `interlock` CLI subprocess, `interlock up` as one, and the
CLI run without blocking the event loop (services the test serves keep answering meanwhile)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


def free_port() -> int:
    """A port nothing listens on right now (bound, read, released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


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


def run_cli(
    env: dict[str, str], *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`interlock ARGS` run to completion (`timeout` seconds at most), its output captured as
    text."""
    return subprocess.run(
        [sys.executable, "-m", "interlock", *args],
        env=env,
        text=True,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


def one_line_refusal(result: subprocess.CompletedProcess[str]) -> str:
    """The one line a refused command printed on stderr (it must have exited 2 with exactly
    one line)."""
    lines = result.stderr.strip().splitlines()
    assert (result.returncode, len(lines)) == (2, 1), result.stderr
    return lines[0]


async def cli_streams(env: dict[str, str], *args: str, within: float = 120) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of `interlock ARGS`, run without blocking the loop."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "interlock",
        *args,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), within)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def cli(env: dict[str, str], *args: str, within: float = 120) -> tuple[int, str]:
    """Exit code and output (stdout, else stderr) of `interlock ARGS`."""
    code, out, err = await cli_streams(env, *args, within=within)
    return code, out or err


async def dead_letters(env: dict[str, str], *filters: str) -> list[dict[str, Any]]:
    """`interlock dlq list --json FILTERS`: the dead letters it lists (it must succeed)."""
    code, out, err = await cli_streams(env, "dlq", "list", "--json", *filters)
    assert code == 0, err
    return list(json.loads(out)["letters"])
