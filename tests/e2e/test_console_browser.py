"""The operator console as a person uses it, in a real headless Chromium (Debian's package,
driven by Playwright): log in, find a workflow waiting for approval, read its diagram and
audit, approve it and watch it complete; a viewer cannot approve; a form without the CSRF
token is refused; every page is labelled, the inbox works from the keyboard, and the browser
logs no error. A screenshot of each page is kept under test-artifacts/console (and, with
INTERLOCK_UPDATE_SCREENSHOTS=1, the README's two under docs/)."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import nats
import pytest
from playwright.async_api import BrowserContext, Page, Playwright, async_playwright, expect

from interlock.config.access import UPSTREAM
from interlock.config.settings import Settings
from interlock.console.devsecrets import ConsoleSecrets
from interlock.ops import queries
from interlock.ops.signals import publish
from tests.support import browser
from tests.support.browser import CHROMIUM, FLAGS, unlabelled
from tests.support.cli import cli_env, free_port, interlock_up
from tests.support.console import PASSWORD, console_settings, served
from tests.support.inprocess import stack_in_process
from tests.support.invoices import INVOICE_STAGES, invoice_awaiting_approval, invoice_in
from tests.support.payloads import envelope
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Debian's chromium"),
]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "console"
DOCS = {"workflow": "console-workflow.png", "tasks": "console-inbox.png"}


class Console:
    """The running console, its workflows, and the errors the browser logged."""

    def __init__(self, url: str, settings: Settings, database_url: str) -> None:
        self.url = url
        self.settings = settings
        self.database_url = database_url
        self.errors: list[str] = []
        self.profiles = 0

    async def browser(self, pw: Playwright, tmp: Path) -> BrowserContext:
        """A fresh Chromium profile whose console errors are recorded."""
        self.profiles += 1
        context = await pw.chromium.launch_persistent_context(
            str(tmp / f"profile-{self.profiles}"),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1400, "height": 900},
        )
        context.on("page", self.watch)
        return context

    def watch(self, page: Page) -> None:
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    async def state(self, workflow_id: str) -> str | None:
        engine = queries.open_reader(self.database_url)
        try:
            view = await queries.workflow_view(engine, workflow_id)
        finally:
            await engine.dispose()
        return view["state"] if view else None


async def start_workflow(nats_url: str) -> str:
    workflow_id = f"ticket-{uuid.uuid4().hex[:8]}"
    event = envelope("START", workflow_id=workflow_id, event_id=f"req-{uuid.uuid4()}")
    nc = await nats.connect(nats_url)
    try:
        await publish(nc.jetstream(), event, UPSTREAM)
    finally:
        await nc.drain()
    return workflow_id


@pytest.fixture(scope="module")
async def console(
    tmp_path_factory: pytest.TempPathFactory, module_nats: str, module_database: str
) -> AsyncIterator[tuple[Console, list[str]]]:
    """The support stack in process with two workflows awaiting approval, and the console."""
    home = tmp_path_factory.mktemp("console-home")
    base = Settings(home=home, parameters={"support": {"approval_sla_seconds": 900}})
    settings = console_settings(base)
    async with stack_in_process(settings, module_nats, module_database, "support"):
        ids = [await start_workflow(module_nats) for _ in range(2)]
        running = Console("", settings, module_database)
        for workflow_id in ids:

            async def waiting(workflow_id: str = workflow_id) -> bool:
                return await running.state(workflow_id) == "AWAITING_APPROVAL"

            await eventually(waiting, within=60, what=f"{workflow_id} awaiting approval")
        async with served(settings, module_nats, module_database) as url:
            running.url = url
            yield running, ids


async def log_in(page: Page, url: str, name: str) -> None:
    await page.goto(f"{url}/")
    await expect(page).to_have_url(f"{url}/login?next=/")
    await page.get_by_label("Operator").fill(name)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Log in").click()
    await expect(page.get_by_role("heading", name="Workflows", exact=True)).to_be_visible()


@asynccontextmanager
async def signed_in(
    running: Console, tmp: Path, name: str
) -> AsyncIterator[tuple[BrowserContext, Page]]:
    """A fresh browser profile with `name` logged in."""
    async with async_playwright() as pw:
        context = await running.browser(pw, tmp)
        try:
            page = await context.new_page()
            await log_in(page, running.url, name)
            yield context, page
        finally:
            await context.close()


async def post_signal(
    context: BrowserContext, running: Console, workflow_id: str, form: dict[str, Any]
) -> int:
    """Post a signal form by hand (no page offered it), with this browser's cookies."""
    response = await context.request.post(
        f"{running.url}/workflows/acme/{workflow_id}/signal", form=form, max_redirects=0
    )
    return response.status


async def shoot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    if os.environ.get("INTERLOCK_UPDATE_SCREENSHOTS") == "1" and name in DOCS:
        shutil.copyfile(path, ROOT / "docs" / DOCS[name])


async def test_an_approver_finds_reads_and_approves_a_workflow_until_it_completes(
    console: tuple[Console, list[str]], tmp_path: Path
) -> None:
    running, (first, _) = console
    async with async_playwright() as pw:
        context = await running.browser(pw, tmp_path)
        page = await context.new_page()
        await page.goto(f"{running.url}/")
        await shoot(page, "login")
        await log_in(page, running.url, "alice")
        await shoot(page, "workflows")
        assert await unlabelled(page) == []

        await page.get_by_role("link", name="Human tasks").click()
        task = page.get_by_role("listitem").filter(has_text=first)
        await expect(task).to_contain_text("approval")
        await expect(task).to_contain_text("Expires")
        await expect(task.get_by_role("button", name=f"Approve {first}")).to_be_visible()
        await shoot(page, "tasks")
        assert await unlabelled(page) == []

        await task.get_by_role("link", name=first).click()
        diagram = page.get_by_role(
            "img", name=f"Transition diagram of support v{REGISTRY.latest('support').version}"
        )
        await expect(diagram).to_be_visible()
        current = page.locator("svg.diagram g.node.current")
        await expect(current).to_have_attribute("data-state", "AWAITING_APPROVAL")
        assert await page.locator("svg.diagram g.edge.taken").count() >= 5
        await expect(page.locator("#audit")).to_contain_text("POLICY_VALID")
        await shoot(page, "workflow-awaiting-approval")

        await page.get_by_role("button", name=f"Approve {first}").click()
        await expect(page.locator("#flash")).to_contain_text(
            "APPROVED accepted: AWAITING_APPROVAL → EXECUTING_ACTION"
        )
        await expect(page.locator("#current-state")).to_have_text("COMPLETED", timeout=30_000)
        await expect(page.locator("#audit")).to_contain_text("by alice (support_approver)")
        await expect(current).to_have_attribute("data-state", "COMPLETED")
        await shoot(page, "workflow")
        assert await running.state(first) == "COMPLETED"

        await page.get_by_role("link", name="Operations").click()
        await expect(page.get_by_role("heading", name="Outbox lag")).to_be_visible()
        await shoot(page, "operations")
        await context.close()
    assert running.errors == []


async def test_a_viewer_sees_no_approval_and_cannot_post_one(
    console: tuple[Console, list[str]], tmp_path: Path
) -> None:
    running, (_, second) = console
    async with signed_in(running, tmp_path, "victor") as (context, page):
        await page.goto(f"{running.url}/workflows/acme/{second}")
        await expect(page.locator("#current-state")).to_have_text("AWAITING_APPROVAL")
        await expect(page.get_by_role("button", name=f"Approve {second}")).to_have_count(0)
        token = await page.locator("input[name=csrf_token]").first.input_value()
        form = {"action": "approve", "next": "/", "csrf_token": token}
        assert await post_signal(context, running, second, form) == 403
    assert await running.state(second) == "AWAITING_APPROVAL"
    assert running.errors == []


async def test_a_forged_form_without_the_csrf_token_is_refused(
    console: tuple[Console, list[str]], tmp_path: Path
) -> None:
    running, (_, second) = console
    async with signed_in(running, tmp_path, "alice") as (context, _):
        assert await post_signal(context, running, second, {"action": "approve"}) == 403
        assert (await context.request.get(f"{running.url}/api/workflows")).status == 200
    async with httpx.AsyncClient() as anonymous:
        assert (await anonymous.get(f"{running.url}/api/workflows")).status_code == 401
    assert await running.state(second) == "AWAITING_APPROVAL"


async def test_the_inbox_is_navigable_from_the_keyboard(
    console: tuple[Console, list[str]], tmp_path: Path
) -> None:
    running, _ = console
    async with signed_in(running, tmp_path, "olga") as (_, page):
        await page.goto(f"{running.url}/tasks")
        await page.locator("article.task").first.focus()
        tasks = await page.locator("article.task").count()
        focused = "document.activeElement.getAttribute('aria-labelledby')"
        for step in range(1, tasks):
            await page.keyboard.press("j")
            assert await page.evaluate(focused) == f"task-{step + 1}"
        await page.keyboard.press("k")
        assert await page.evaluate(focused) == f"task-{max(tasks - 1, 1)}"
        await page.keyboard.press("Tab")
        tag = await page.evaluate("document.activeElement.tagName")
        assert tag in {"A", "INPUT", "BUTTON"}
    assert running.errors == []


async def test_changes_are_requested_with_feedback_and_an_operator_cancels_with_a_reason(
    console: tuple[Console, list[str]], tmp_path: Path
) -> None:
    running, (_, second) = console
    async with signed_in(running, tmp_path, "alice") as (_, page):
        await page.goto(f"{running.url}/workflows/acme/{second}")
        await expect(page.get_by_role("button", name=f"Cancel {second}")).to_have_count(0)
        await page.get_by_label("Feedback").fill("Offer a partial refund instead")
        await page.get_by_role("button", name=f"Request changes {second}").click()
        await expect(page.locator("#flash")).to_contain_text(
            "CHANGES_REQUESTED accepted: AWAITING_APPROVAL → GENERATING_RECOMMENDATION"
        )

        async def back_for_approval() -> bool:
            return await running.state(second) == "AWAITING_APPROVAL"

        await eventually(back_for_approval, within=60, what="a new recommendation to approve")
    async with signed_in(running, tmp_path, "olga") as (_, page):
        await page.goto(f"{running.url}/workflows/acme/{second}")
        await expect(page.locator("#audit")).to_contain_text("by alice (support_approver)")
        await page.get_by_label("Reason").last.fill("customer withdrew the request")
        await page.get_by_role("button", name=f"Cancel {second}").click()
        await expect(page.locator("#flash")).to_contain_text("CANCEL_REQUESTED accepted")
        await expect(page.locator("#current-state")).to_have_text("CANCELLED", timeout=30_000)
        await expect(page.locator("#audit")).to_contain_text("by olga (support_supervisor)")
    assert await running.state(second) == "CANCELLED"
    assert running.errors == []


async def test_an_invoice_is_approved_in_the_browser_with_the_total_its_page_shows(
    tmp_path: Path,
) -> None:
    """A plugin's workflow under `interlock up`: its approve form is the invoice's own (the
    total it shows, bound in), and clicking Approve posts the invoice."""
    home = tmp_path / "home"
    with interlock_up(
        home,
        "projector",
        "relay",
        "timer",
        *INVOICE_STAGES,
        "console",
        INTERLOCK_CONSOLE_PORT=str(free_port()),
    ):
        env = cli_env(home)
        url = json.loads((home / "endpoints.json").read_text())["console_url"]
        password = ConsoleSecrets(home, Settings(home=home).secrets_dir).dev_password()
        workflow_id = await invoice_awaiting_approval(env, f"browser-{uuid.uuid4().hex[:8]}")
        running = Console(url, Settings(home=home), "")
        async with async_playwright() as pw:
            context = await running.browser(pw, tmp_path)
            await browser.approve_by_clicking(
                context,
                url,
                password,
                workflow_id,
                shown=("total", "1799.28"),
                moves="AWAITING_APPROVAL → POSTING",
            )
            await context.close()
        await eventually(
            lambda: invoice_in(env, workflow_id, "POSTED"), within=90, every=0.5, what="POSTED"
        )
    assert running.errors == []
