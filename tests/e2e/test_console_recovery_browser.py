"""The console's recovery buttons in a real headless Chromium, for support, request and invoice:
three workflows of each whose effect's outcome stayed unknown wait in review, each page shows
the effect as unknown with its idempotency key, and clicking Confirm effect (with the receipt
found at the provider typed into its form), Re-run effect and Compensate ends them done with
nothing new at the provider, done with the effect once, and compensated.

One chaos-tier stack serves all three, its sweeper bound longer than the test so the effect
stages' own deliveries run out (`effect_cli.in_review`, `effect_cli.request_in_review`; the
refunds and the requests are brought to review together, the slow part); the console runs in
the test process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from interlock.config.plugins import installed
from interlock.simulators import effect_rows, seed_customer
from interlock.tools.demo.runner import Run
from tests.chaos import conftest as chaos
from tests.support.browser import CHROMIUM, chromium, log_in
from tests.support.chaos_stack import Stack
from tests.support.console import PASSWORD, console_settings, served
from tests.support.effect_cli import in_review, interlock, request_in_review, request_settled

pytest.importorskip("interlock_invoice")
from tests.support.invoices import ledger_of, posting_unknown

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's chromium"),
]
ACTIONS = ("Confirm effect", "Re-run effect", "Compensate")
REGISTRY = installed().registry
"""Every installed type's, the invoice plugin's too."""
UNANSWERED = ["timeout"] * 40
"""Every refund times out with nothing under its key, longer than the stage tries."""


shared_stacks = chaos.shared_stacks
quiet_hosted_stack = chaos.quiet_hosted_stack
"""The chaos tier's stage-hosted stack with the sweeper's bound longer than a test (a
re-dispatched job would restart the stage's deliveries and it would never give up)."""


@pytest.fixture(scope="module")
async def in_review_runs(quiet_hosted_stack: Stack) -> tuple[list[Run], list[tuple[str, str]]]:
    """Three refunds and three requests (tenant, workflow id) whose effects' outcomes stayed
    unknown, brought to review together: their stages give up after the same ~50 s."""
    stack = quiet_hosted_stack
    refunds, requests = await asyncio.gather(
        asyncio.gather(*(in_review(stack, {"execute": UNANSWERED}) for _ in ACTIONS)),
        asyncio.gather(*(request_in_review(stack) for _ in ACTIONS)),
    )
    return list(refunds), list(requests)


async def _recover(
    page: Page,
    workflow: str,
    *,
    state: str,
    action: str,
    receipt: dict[str, str],
    review: str = "MANUAL_REVIEW",
) -> str:
    """Open `workflow` (the URL of its page), waiting in `review`, check its effect in `state`
    is shown unknown, fill the receipt form (with Confirm effect) and click `action`; the key
    the page showed."""
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
    await expect(page.locator("#flash")).to_contain_text(f"accepted: {review} →")
    return key


async def test_unknown_postings_are_confirmed_rerun_and_compensated_from_the_console(
    quiet_hosted_stack: Stack, tmp_path: Path
) -> None:
    stack = quiet_hosted_stack
    runs = await asyncio.gather(
        *(posting_unknown(stack, f) for f in ("unanswered", "unanswered", "answers-lost"))
    )
    errors: list[str] = []
    async with (
        served(console_settings(stack.settings), stack.nats_url, stack.dsn, REGISTRY) as url,
        chromium(tmp_path / "profile", errors) as context,
    ):
        page = await context.new_page()
        await log_in(page, url, "olga", PASSWORD)
        for run, action in zip(runs, ACTIONS, strict=True):
            found = {"invoice_id": run.workflow_id, "posting_number": "FIN-FOUND"}
            key = await _recover(
                page,
                f"{url}/workflows/{run.tenant_id}/{run.workflow_id}",
                state="POSTING",
                action=action,
                receipt={**found, "posting_reconciled": "true"},
            )
            assert key == run.workflow_id
            await expect(page.locator("#current-state")).to_have_text(
                "REVERSED" if action == "Compensate" else "POSTED", timeout=60_000
            )
    confirmed, rerun, reversed_ = runs
    ledger = ledger_of(stack)
    assert (await confirmed.view() or {})["data"]["posting_number"] == "FIN-FOUND"
    assert await ledger.count("postings", confirmed.workflow_id) == 0
    assert await ledger.count("postings", rerun.workflow_id) == 1
    assert await ledger.count("reversals", reversed_.workflow_id) == 1
    assert errors == []


async def test_unknown_refunds_are_confirmed_rerun_and_compensated_from_the_console(
    quiet_hosted_stack: Stack,
    in_review_runs: tuple[list[Run], list[tuple[str, str]]],
    tmp_path: Path,
) -> None:
    stack = quiet_hosted_stack
    runs, _ = in_review_runs
    for run in runs:  # the provider answers from now on
        await seed_customer(stack.dsn, run.customer_id, faults={"execute": []})
    errors: list[str] = []
    async with (
        served(console_settings(stack.settings), stack.nats_url, stack.dsn, REGISTRY) as url,
        chromium(tmp_path / "profile", errors) as context,
    ):
        page = await context.new_page()
        await log_in(page, url, "olga", PASSWORD)
        for run, action in zip(runs, ACTIONS, strict=True):
            key = await _recover(
                page,
                f"{url}/workflows/{run.tenant_id}/{run.workflow_id}",
                state="EXECUTING_ACTION",
                action=action,
                receipt={"provider_operation_id": "op-found-by-hand", "status": "succeeded"},
            )
            assert key.startswith("support-action:")
            await expect(page.locator("#current-state")).to_have_text(
                "FAILED_COMPENSATED" if action == "Compensate" else "COMPLETED", timeout=60_000
            )
    confirmed, rerun, compensated = runs
    receipt = (await confirmed.view() or {})["data"]["action"]
    assert receipt["provider_operation_id"] == "op-found-by-hand"
    assert await stack.effects(confirmed) == 0
    assert await stack.effects(rerun) == 1
    facts = (await compensated.view() or {})["execution"]["effects"]
    assert facts["EXECUTING_ACTION"]["status"] == "compensated"
    assert errors == []


async def test_unknown_request_effects_are_confirmed_rerun_and_compensated_from_the_console(
    quiet_hosted_stack: Stack,
    in_review_runs: tuple[list[Run], list[tuple[str, str]]],
    tmp_path: Path,
) -> None:
    stack = quiet_hosted_stack
    _, runs = in_review_runs
    code, shown = await interlock(stack, "show", runs[0][1])
    assert code == 0
    assert [set(e) for e in shown["effects"]] == [{"state", "status", "idempotency_key"}]
    (effect,) = shown["effects"]
    assert (effect["state"], effect["status"]) == ("executing", "unknown")
    errors: list[str] = []
    async with (
        served(console_settings(stack.settings), stack.nats_url, stack.dsn, REGISTRY) as url,
        chromium(tmp_path / "profile", errors) as context,
    ):
        page = await context.new_page()
        await log_in(page, url, "olga", PASSWORD)
        for (tenant_id, workflow_id), action in zip(runs, ACTIONS, strict=True):
            key = await _recover(
                page,
                f"{url}/workflows/{tenant_id}/{workflow_id}",
                state="executing",
                action=action,
                receipt={"operation_id": "eff-found-by-hand", "effect": "create_follow_up"},
                review="review",
            )
            assert key.startswith("request-effect:")
            if workflow_id == runs[0][1]:
                assert key == effect["idempotency_key"]
            await expect(page.locator("#current-state")).to_have_text(
                "compensated" if action == "Compensate" else "completed", timeout=60_000
            )
    done = [await request_settled(stack, workflow_id) for _, workflow_id in runs]
    assert [v["state"] for v in done] == ["completed", "completed", "compensated"]
    assert done[0]["data"]["effect"]["operation_id"] == "eff-found-by-hand"
    assert done[2]["execution"]["effects"]["executing"]["status"] == "compensated"
    ledger = await effect_rows(stack.dsn, [workflow_id for _, workflow_id in runs])
    assert [row["workflow_id"] for row in ledger] == [runs[1][1]]
    assert errors == []
