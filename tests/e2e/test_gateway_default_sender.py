"""The embedded stack's gateway accepts webhooks out of the box: `interlock up` configures a
development sender, `dev`, whose secret it keeps with the installation's other secrets and
whose location it prints."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from interlock import access
from interlock.settings import Settings
from tests.support.cli import cli_env
from tests.support.gateway_webhooks import APPROVAL, PATH, signed

pytestmark = pytest.mark.timeout(180)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_up_configures_a_development_sender_that_the_gateway_accepts(tmp_path: Path) -> None:
    home, port = tmp_path / "home", _free_port()
    only = ("--only", "projector", "--only", "relay", "--only", "gateway")
    up = subprocess.Popen(
        [sys.executable, "-m", "interlock", "up", *only],
        env=cli_env(home, INTERLOCK_GATEWAY_PORT=str(port)),
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
        printed = "".join(seen)
        assert up.poll() is None, printed
        secrets = access.secrets_of(Settings(home=home)).directory
        assert "sender `dev`" in printed
        assert str(secrets / "gateway.json") in printed
        assert (secrets / "gateway.json").stat().st_mode & 0o077 == 0
        secret = json.loads((secrets / "gateway.json").read_text())["dev"]
        assert secret not in printed
        body, headers = signed(APPROVAL, sender="dev", secret=secret)
        answer = httpx.post(f"http://127.0.0.1:{port}{PATH}", content=body, headers=headers)
        assert answer.status_code == 202, answer.text
    finally:
        up.send_signal(signal.SIGINT)
        up.wait(60)
