"""The console's recovery buttons in a real headless Chromium, under `interlock up`: three
invoices whose posting went unanswered wait in review, each page shows the posting's effect
as unknown with its idempotency key, and clicking Confirm effect (with the number found in
the ledger), Re-run effect and Compensate ends them posted with nothing new in the ledger,
posted once, and reversed once."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from interlock.console.devsecrets import ConsoleSecrets
from interlock.settings import Settings
from tests.support.browser import CHROMIUM, chromium, log_in
from tests.support.cli import cli_env, free_port, interlock_up
from tests.support.invoices import INVOICE_STAGES, invoice_in, start_invoice
from tests.support.polling import eventually

pytest.importorskip("interlock_invoice")
from interlock_invoice.scenarios import SMALL, number
from interlock_invoice.simulator import Ledger, ledger_path

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]
FAULTS = ("unanswered", "unanswered", "answers-lost")
"""How the finance simulator treats each invoice's postings until it is healed."""


async def _recover(page: Page, url: str, workflow_id: str, action: str) -> None:
    await page.goto(f"{url}/workflows/acme/{workflow_id}")
    effect = page.locator('p.effect[data-effect="POSTING"]')
    await expect(effect).to_contain_text("Effect POSTING: unknown")
    await expect(effect.locator("code")).to_have_text(workflow_id)
    if action == "Confirm effect":
        form = page.locator("form.action.confirm_effect")
        found = {
            "invoice_id": workflow_id,
            "posting_number": "FIN-FOUND",
            "posting_reconciled": "true",
        }
        for name, value in found.items():
            field = form.locator(f'input[name="p.{name}"]')
            if await field.get_attribute("type") != "hidden":
                await field.fill(value)
    await page.get_by_role("button", name=f"{action} {workflow_id}").click()


async def _in_review(env: dict[str, str], workflow_id: str) -> None:
    async def waiting() -> bool:
        return await invoice_in(env, workflow_id, "MANUAL_REVIEW") is not None

    await eventually(waiting, within=120, every=0.5, what=f"{workflow_id} in review")


async def test_unknown_postings_are_confirmed_rerun_and_compensated_from_the_console(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    with interlock_up(
        home,
        "projector",
        "relay",
        "timer",
        *INVOICE_STAGES,
        "invoice.reverse",
        "console",
        INTERLOCK_CONSOLE_PORT=str(free_port()),
    ):
        env = cli_env(home)
        url = json.loads((home / "endpoints.json").read_text())["console_url"]
        password = ConsoleSecrets(home, Settings(home=home).secrets_dir).dev_password()
        tokens = [f"recover-{uuid.uuid4().hex[:8]}" for _ in FAULTS]
        ids = [
            await start_invoice(env, t, fault=f, amounts=SMALL)
            for t, f in zip(tokens, FAULTS, strict=True)
        ]
        await asyncio.gather(*(_in_review(env, w) for w in ids))
        ledger = Ledger(ledger_path(home), ())
        for token, fault in zip(tokens, FAULTS, strict=True):
            await ledger.heal(number(token, fault), fault)  # the finance system answers again
        errors: list[str] = []
        async with chromium(tmp_path / "profile", errors) as context:
            page = await context.new_page()
            await log_in(page, url, "dev", password)
            for workflow_id, action in zip(
                ids, ("Confirm effect", "Re-run effect", "Compensate"), strict=True
            ):
                await _recover(page, url, workflow_id, action)
                await expect(page.locator("#flash")).to_contain_text("accepted: MANUAL_REVIEW →")
                await expect(page.locator("#current-state")).to_have_text(
                    "REVERSED" if action == "Compensate" else "POSTED", timeout=60_000
                )
        confirmed, rerun, reversed_ = ids
        done = await invoice_in(env, confirmed, "POSTED")
        assert done is not None
        assert done["data"]["posting_number"] == "FIN-FOUND"
        assert await ledger.count("postings", confirmed) == 0
        assert await ledger.count("postings", rerun) == 1
        assert await ledger.count("reversals", reversed_) == 1
    assert errors == []
