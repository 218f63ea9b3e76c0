"""The expense plugin approved from the console by clicking, in a real headless Chromium
(Debian's package, driven by Playwright), under `interlock up` with the simulated bank: the
approve form is the claim's own (the amount the task shows, bound in), and one click pays the
claim exactly once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from interlock.config.settings import Settings
from interlock.console.devsecrets import ConsoleSecrets
from tests.e2e.test_console_browser import Console
from tests.e2e.test_expense_plugin import STAGES, Stack, banked
from tests.support.browser import CHROMIUM, approve_by_clicking
from tests.support.cli import cli_env, free_port, interlock_up

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]


async def test_an_expense_claim_is_approved_in_the_browser_and_paid_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with banked() as (bank, adapters):
        with interlock_up(
            home,
            "projector",
            "relay",
            "timer",
            *STAGES,
            "console",
            INTERLOCK_CONSOLE_PORT=str(free_port()),
            INTERLOCK_ADAPTERS=adapters,
        ):
            stack = Stack(cli_env(home), bank)
            url = json.loads((home / "endpoints.json").read_text())["console_url"]
            password = ConsoleSecrets(home, Settings(home=home).secrets_dir).dev_password()
            workflow_id = await stack.claim("Flight to Lisbon", "640.00")
            await stack.reaches(workflow_id, "AWAITING_APPROVAL")
            running = Console(url, Settings(home=home), "")
            async with async_playwright() as pw:
                context = await running.browser(pw, tmp_path)
                await approve_by_clicking(
                    context,
                    url,
                    password,
                    workflow_id,
                    shown=("amount", "640.00"),
                    moves="AWAITING_APPROVAL → PAYING",
                )
                await context.close()
            paid = await stack.reaches(workflow_id, "PAID")
    assert running.errors == []
    assert len(stack.payments_of(workflow_id)) == 1
    approval = next(a for a in paid["audit"] if a["event_type"] == "APPROVED")
    # the development operator holds every role and signs with the largest limit's
    assert approval["actor"]["role"] == "finance_director"
