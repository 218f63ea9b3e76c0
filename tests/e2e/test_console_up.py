"""`interlock up` serves the console on a fresh embedded stack: it prints the URL and the
development operator's password (kept with the installation's secrets), names the console in
`endpoints.json`, and the development operator can log in and read every page through the
console's own read-only database role and its own broker identity (the dead letters are
readable to it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from interlock.console.devsecrets import ConsoleSecrets
from interlock.settings import Settings
from tests.support.cli import interlock_up
from tests.support.console import csrf_of, free_port

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def up_with_console(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    home = tmp_path / "home"
    port = free_port()
    with interlock_up(home, "projector", "console", INTERLOCK_CONSOLE_PORT=str(port)) as printed:
        yield home, printed


def test_up_serves_the_console_to_its_development_operator(
    up_with_console: tuple[Path, str],
) -> None:
    home, printed = up_with_console
    endpoints = json.loads((home / "endpoints.json").read_text())
    url = endpoints["console_url"]
    settings = Settings(home=home)  # the session's secrets directory, as `up` was given it
    password = ConsoleSecrets(home, settings.secrets_dir).dev_password()
    line = next((ln for ln in printed.splitlines() if ln.startswith("console ")), printed)
    assert line.startswith(f"console {url}  (development operator 'dev', password {password}")
    with httpx.Client(base_url=url, timeout=10) as client:
        assert client.get("/").status_code == 303
        assert client.get("/api/workflows").status_code == 401
        token = csrf_of(client.get("/login").text)
        form = {"name": "dev", "password": password, "csrf_token": token, "next": "/"}
        assert client.post("/login", data=form).status_code == 303
        for page in ("/", "/tasks", "/operations", "/api/workflows"):
            assert client.get(page).status_code == 200, page
        operations = client.get("/operations").text
        assert "broker unreachable" not in operations
        assert "refused or unanswered" not in operations
