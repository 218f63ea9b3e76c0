"""The console's recovery buttons in a real headless Chromium, for support and invoice: three
workflows of each whose effect's outcome stayed unknown wait in review, each page shows the
effect as unknown with its idempotency key, and clicking Confirm effect (with the receipt found
at the provider), Re-run effect and Compensate ends them done with nothing new at the
provider, done with the effect once, and compensated.

Invoice runs under `interlock up`; support on the chaos tier's stack with a sweeper bound
longer than the test, so the refund stage's own deliveries run out (`effect_cli.in_review`)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from interlock.console.devsecrets import ConsoleSecrets
from interlock.settings import Settings
from interlock.simulators import seed_customer
from tests.chaos.conftest import running_stack
from tests.support.browser import CHROMIUM, chromium, log_in
from tests.support.chaos_stack import Stack
from tests.support.cli import cli_env, free_port, interlock_up
from tests.support.console import PASSWORD, console_settings, served
from tests.support.effect_cli import in_review
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
UNANSWERED = ["timeout"] * 40
"""Every refund times out with nothing under its key, longer than the stage tries."""
"""How the finance simulator treats each invoice's postings until it is healed."""


ACTIONS = ("Confirm effect", "Re-run effect", "Compensate")


async def _recover(
    page: Page, workflow: str, *, state: str, action: str, receipt: dict[str, str]
) -> str:
    """Open `workflow` (the URL of its page), check its effect in `state` is shown unknown,
    fill the receipt form (with Confirm effect) and click `action`; the key the page showed."""
    await page.goto(workflow)
    workflow_id = workflow.rsplit("/", 1)[1]
    effect = page.locator(f'p.effect[data-effect="{state}"]')
    await expect(effect).to_contain_text(f"Effect {state}: unknown")
    await expect(effect).to_contain_text("ask the provider about it first")
    key = await effect.locator("code").inner_text()
    if action == "Confirm effect":  # the receipt found at the provider under the key
        form = page.locator("form.action.confirm_effect")
        for name, value in {"idempotency_key": key, **receipt}.items():
            field = form.locator(f'input[name="p.{name}"]')
            if await field.count() and await field.get_attribute("type") != "hidden":
                await field.fill(value)
    await page.get_by_role("button", name=f"{action} {workflow_id}").click()
    await expect(page.locator("#flash")).to_contain_text("accepted: MANUAL_REVIEW →")
    return key


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
            for workflow_id, action in zip(ids, ACTIONS, strict=True):
                receipt = {
                    "invoice_id": workflow_id,
                    "posting_number": "FIN-FOUND",
                    "posting_reconciled": "true",
                }
                key = await _recover(
                    page,
                    f"{url}/workflows/acme/{workflow_id}",
                    state="POSTING",
                    action=action,
                    receipt=receipt,
                )
                assert key == workflow_id
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


@pytest.fixture(scope="module")
async def quiet_sweeper_stack(
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    async with running_stack(
        e2e_settings,
        module_nats,
        module_database,
        tmp_path_factory,
        stage_host=True,
        sweep_after=3600,
    ) as running:
        yield running


async def test_unknown_refunds_are_confirmed_rerun_and_compensated_from_the_console(
    quiet_sweeper_stack: Stack, tmp_path: Path
) -> None:
    stack = quiet_sweeper_stack
    runs = await asyncio.gather(*(in_review(stack, {"execute": UNANSWERED}) for _ in ACTIONS))
    for run in runs:  # the provider answers from now on
        await seed_customer(stack.dsn, run.customer_id, faults={"execute": []})
    errors: list[str] = []
    settings = console_settings(stack.settings)
    async with (
        served(settings, stack.nats_url, stack.dsn) as url,
        chromium(tmp_path / "profile", errors) as context,
    ):
        page = await context.new_page()
        await log_in(page, url, "olga", PASSWORD)
        for run, action in zip(runs, ACTIONS, strict=True):
            receipt = {"provider_operation_id": "op-found-by-hand", "status": "succeeded"}
            key = await _recover(
                page,
                f"{url}/workflows/{run.tenant_id}/{run.workflow_id}",
                state="EXECUTING_ACTION",
                action=action,
                receipt=receipt,
            )
            assert key.startswith("support-action:")
            await expect(page.locator("#current-state")).to_have_text(
                "FAILED_COMPENSATED" if action == "Compensate" else "COMPLETED", timeout=60_000
            )
    confirmed, rerun, compensated = runs
    assert (await confirmed.view() or {})["data"]["action"]["provider_operation_id"] == (
        "op-found-by-hand"
    )
    assert await stack.effects(confirmed) == 0
    assert await stack.effects(rerun) == 1
    assert (await compensated.view() or {})["execution"]["effects"]["EXECUTING_ACTION"][
        "status"
    ] == "compensated"
    assert errors == []
