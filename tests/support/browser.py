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


async def log_in(page: Page, url: str, name: str, password: str) -> None:
    """Log in to the console at `url` as `name`."""
    await page.goto(f"{url}/login")
    await page.get_by_label("Operator").fill(name)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("heading", name="Workflows", exact=True)).to_be_visible()
