"""Debian's headless Chromium driven by Playwright, as the console's browser tests use it: a
fresh profile per context, every console error and page error it logs recorded."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from playwright.async_api import BrowserContext, Page, async_playwright, expect

from interlock.config.settings import Settings
from interlock.console.devsecrets import ConsoleSecrets

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


async def log_in(page: Page, url: str, name: str, password: str) -> None:
    """Log in to the console at `url` as `name`."""
    await page.goto(f"{url}/login")
    await page.get_by_label("Operator").fill(name)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("heading", name="Workflows", exact=True)).to_be_visible()


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


async def approve_in_console(
    home: Path, profile: Path, workflow_id: str, shown: tuple[str, str], flash: str
) -> list[str]:
    """Log in to the console of the `interlock up` under `home` as the development operator,
    check that the workflow's approve form shows `shown` (its field and value), that every
    control is labelled, click Approve and wait for `flash`; the errors the browser logged."""
    url = json.loads((home / "endpoints.json").read_text())["console_url"]
    password = ConsoleSecrets(home, Settings(home=home).secrets_dir).dev_password()
    errors: list[str] = []
    async with chromium(profile, errors) as context:
        page = await context.new_page()
        await log_in(page, url, "dev", password)
        await page.goto(f"{url}/workflows/acme/{workflow_id}")
        approve = page.locator("form.action.approve")
        field, value = shown
        await expect(approve.locator(f'input[name="p.{field}"]')).to_have_value(value)
        assert await unlabelled(page) == []
        await page.get_by_role("button", name=f"Approve {workflow_id}").click()
        await expect(page.locator("#flash")).to_contain_text(flash)
    return errors
