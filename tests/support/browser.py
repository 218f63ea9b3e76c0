"""Debian's headless Chromium driven by Playwright, as the console's browser tests use it: a
fresh profile per context, every console error and page error it logs recorded."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import BrowserContext, Page, async_playwright, expect

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@asynccontextmanager
async def chromium(profile: Path, errors: list[str]) -> AsyncIterator[BrowserContext]:
    """A browser context on a fresh profile under `profile`; what it logs as an error is
    appended to `errors`."""

    def watch(page: Page) -> None:
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))

    async with async_playwright() as pw:
        context = await pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1400, "height": 900},
        )
        context.on("page", watch)
        try:
            yield context
        finally:
            await context.close()


async def unlabelled(page: Page) -> list[str]:
    """Form controls and buttons with no accessible name."""
    return list(
        await page.evaluate(
            """() => Array.from(document.querySelectorAll(
                   'input:not([type=hidden]), select, textarea, button'))
                 .filter(el => !(el.labels && el.labels.length) &&
                               !el.getAttribute('aria-label') && !el.textContent.trim())
                 .map(el => el.outerHTML)"""
        )
    )


async def approve_by_clicking(
    context: BrowserContext,
    url: str,
    password: str,
    workflow_id: str,
    *,
    shown: tuple[str, str],
    moves: str,
) -> None:
    """As the `dev` operator, open the workflow's page, see its approve form carry the field
    `shown[0]` with the value `shown[1]` (bound to what the task showed), every control
    labelled, click Approve and see the projector's answer: accepted, `moves` (e.g.
    "AWAITING_APPROVAL → POSTING")."""
    page = await context.new_page()
    await log_in(page, url, "dev", password)
    await page.goto(f"{url}/workflows/acme/{workflow_id}")
    approve = page.locator("form.action.approve")
    field, value = shown
    await expect(approve.locator(f'input[name="p.{field}"]')).to_have_value(value)
    assert await unlabelled(page) == []
    await page.get_by_role("button", name=f"Approve {workflow_id}").click()
    await expect(page.locator("#flash")).to_contain_text(f"APPROVED accepted: {moves}")


async def log_in(page: Page, url: str, name: str, password: str) -> None:
    """Log in to the console at `url` as `name`."""
    await page.goto(f"{url}/login")
    await page.get_by_label("Operator").fill(name)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("heading", name="Workflows", exact=True)).to_be_visible()
