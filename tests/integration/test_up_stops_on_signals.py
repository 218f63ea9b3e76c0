"""`up` stops on SIGINT or SIGTERM promptly whatever its children do, crash-looping included
(each child dying at start-up and restarted, as when a folder shadows the package)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import cli_env

pytestmark = pytest.mark.timeout(180)
HELLO = Path(__file__).parents[1] / "fixtures" / "plugins" / "hello"
CRASHING = """\
import os
import sys

if "service" in sys.argv:  # the component's process: dies at once, every time
    print("crashing", flush=True)
    os._exit(1)
from hello_workflow import PLUGIN
"""


def _crashing_site(root: Path) -> Path:
    """A plugin whose stage process dies as it starts (exit 1: restarted, again and again)."""
    site = root / "site"
    info = site / "crashing_hello-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: crashing-hello\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[interlock.workflows]\nhello = crashing_hello:PLUGIN\n")
    (site / "crashing_hello.py").write_text(CRASHING)
    return site


def _crashed(log: Path, times: int, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not (log.exists() and log.read_text().count("crashing") >= times):
        assert time.monotonic() < deadline, f"{log} shows no {times} crashes after {within}s"
        time.sleep(0.1)


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_up_promptly_while_a_component_crash_loops(
    tmp_path: Path, nats_url: str, database_url: str, stop_signal: signal.Signals
) -> None:
    home, site = tmp_path / "home", _crashing_site(tmp_path)
    env = {
        "INTERLOCK_NATS_URL": nats_url,
        "INTERLOCK_DATABASE_URL": database_url,
        "PYTHONPATH": f"{site}:{HELLO}",
        "INTERLOCK_SHUTDOWN_GRACE": "3",
        "INTERLOCK_STAGE_HOST": "off",
    }
    up = subprocess.Popen(
        [sys.executable, "-m", "interlock", "up", "--only", "projector", "--only", "hello.greet"],
        env=cli_env(home, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _crashed(home / "logs" / "hello.greet.log", times=3)
        up.send_signal(stop_signal)
        signalled = time.monotonic()
        out, _ = up.communicate(timeout=30)
        stopped_after = time.monotonic() - signalled
    finally:
        up.kill()
        up.wait()

    assert stopped_after < 3 + 4, out  # the shutdown grace, whatever the children do
    assert "Traceback" not in out, out
    assert up.returncode in (0, 1, 130), out
