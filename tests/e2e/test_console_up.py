"""`interlock up` serves the console on a fresh embedded stack: it prints the URL and the
development operator's password (kept with the installation's secrets), names the console in
`endpoints.json`, and the development operator can log in and read every page through the
console's own read-only database role and its own broker identity (the dead letters are
readable to it)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from interlock.config.settings import Settings
from interlock.console.devsecrets import ConsoleSecrets
from tests.support.cli import cli_env, free_port, interlock_up
from tests.support.console import csrf_of
from tests.support.invoices import INVOICE_STAGES, invoice_awaiting_approval, invoice_in
from tests.support.polling import eventually

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


@pytest.fixture
def up_with_invoices(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    home = tmp_path / "home"
    port = free_port()
    with interlock_up(
        home,
        "projector",
        "relay",
        "timer",
        *INVOICE_STAGES,
        "console",
        INTERLOCK_CONSOLE_PORT=str(port),
    ) as printed:
        yield home, printed


def action_form(html: str, action: str) -> dict[str, str]:
    """The named inputs of the page's form for `action`, with the values the page put in."""
    found = re.search(rf'<form [^>]*class="action {action}">(.*?)</form>', html, re.S)
    assert found, f"no {action} form on the page"
    inputs = re.findall(r"<input ([^>]*)>", found.group(1))
    named = [dict(re.findall(r'(\w[\w-]*)="([^"]*)"', attrs)) for attrs in inputs]
    return {i["name"]: i.get("value", "") for i in named}


async def test_an_invoice_is_approved_from_the_console_with_the_total_it_showed(
    up_with_invoices: tuple[Path, str],
) -> None:
    """The approve form of a plugin's workflow is the plugin's own: it carries the invoice's
    total as the page showed it, and the approval posts the invoice."""
    home, _ = up_with_invoices
    env = cli_env(home)
    url = json.loads((home / "endpoints.json").read_text())["console_url"]
    password = ConsoleSecrets(home, Settings(home=home).secrets_dir).dev_password()
    workflow_id = await invoice_awaiting_approval(env, f"console-{uuid.uuid4().hex[:8]}")
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        token = csrf_of((await client.get("/login")).text)
        login = {"name": "dev", "password": password, "csrf_token": token, "next": "/"}
        assert (await client.post("/login", data=login)).status_code == 303
        page = f"/workflows/acme/{workflow_id}"
        form = action_form((await client.get(page)).text, "approve")
        assert form["p.total"] == "1799.28"
        assert set(form) - {"csrf_token", "action", "next"} == {"p.total", "p.comment"}
        answered = await client.post(f"{page}/signal", data=form, follow_redirects=True)
        assert "APPROVED accepted: AWAITING_APPROVAL → POSTING" in answered.text, answered.text
    posted = await eventually(
        lambda: invoice_in(env, workflow_id, "POSTED"), within=90, every=0.5, what="POSTED"
    )
    approval = next(a for a in posted["audit"] if a["event_type"] == "APPROVED")
    assert approval["actor"]["id"] == "dev"
    assert approval["actor"]["role"] in {"invoice_approver", "finance_controller"}
