"""The operator console in tests: operators with known passwords, and an app served in
process (over ASGI for page tests, or by uvicorn on a free port for the browser)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from argon2 import PasswordHasher
from pydantic import SecretStr

from interlock.config.settings import ConsoleOperator, Settings
from interlock.console import create_app, serve
from interlock.console.limiter import LoginLimiter
from interlock.console.operators import Operators
from interlock.contracts.registry import Registry
from tests.support.cli import free_port
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY

PASSWORD = "correct horse battery staple"
_HASH = SecretStr(PasswordHasher(time_cost=1, memory_cost=8, parallelism=1).hash(PASSWORD))
"""Every operator's hash: argon2id at the lowest cost argon2 allows, as the console checks any
hash it is given. These tests are about who may log in and what they see, not the hash's
strength (`hash_password`'s is tested on its own); at its cost, ~0.2 s of CPU, every login of
every console test paid it again."""
OPERATORS = {
    "alice": ConsoleOperator(
        password_hash=_HASH,
        roles=frozenset({"viewer", "approver"}),
        actor_roles=("support_approver",),
    ),
    "olga": ConsoleOperator(
        password_hash=_HASH,
        roles=frozenset({"viewer", "approver", "operator"}),
        actor_roles=("support_supervisor", "operator"),
    ),
    "victor": ConsoleOperator(password_hash=_HASH),
}


class ManualClock:
    """A monotonic clock (seconds) for the login limiter that moves only when a test says so."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def console_settings(settings: Settings, **overrides: Any) -> Settings:
    return settings.model_copy(
        update={"console_operators": OPERATORS, "console_port": free_port(), **overrides}
    )


@asynccontextmanager
async def asgi_client(
    settings: Settings, nats_url: str, database_url: str, limiter: LoginLimiter | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of a console app running in this process (its lifespan included)."""
    app = create_app(
        settings,
        nats_url,
        database_url,
        registry=REGISTRY,
        operators=Operators(settings.console_operators or {}),
        session_key="test-session-key",
        limiter=limiter,
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
            yield client


def unconnected_client(
    operators: Operators, limiter: LoginLimiter | None = None
) -> httpx.AsyncClient:
    """An HTTP client of a console app in this process with nothing behind it (no broker, no
    database, no lifespan): for the pages that need neither, such as the login page."""
    options: dict[str, Any] = {} if limiter is None else {"limiter": limiter}
    app = create_app(
        Settings(),
        "nats://127.0.0.1:1",
        "postgresql://nobody@127.0.0.1:1/none",
        registry=REGISTRY,
        operators=operators,
        session_key="test-session-key",
        **options,
    )
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://console")


async def log_in(client: httpx.AsyncClient, name: str, password: str = PASSWORD) -> httpx.Response:
    """Post the login form (with the CSRF token the login page hands out)."""
    page = await client.get("/login")
    token = csrf_of(page.text)
    return await client.post(
        "/login", data={"name": name, "password": password, "csrf_token": token, "next": "/"}
    )


def csrf_of(html: str) -> str:
    marker = 'name="csrf_token" value="'
    start = html.index(marker) + len(marker)
    return html[start : html.index('"', start)]


@asynccontextmanager
async def served(
    settings: Settings, nats_url: str, database_url: str, registry: Registry = REGISTRY
) -> AsyncIterator[str]:
    """The console served by uvicorn on `settings.console_port` (for the runtime's own types,
    or `registry`'s); yields its URL."""
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, nats_url, database_url, stop, registry=registry))
    url = f"http://127.0.0.1:{settings.console_port}"

    async def answers() -> bool:
        try:
            async with httpx.AsyncClient() as client:
                return (await client.get(f"{url}/healthz")).status_code == 200
        except httpx.TransportError:
            return False

    try:
        await eventually(answers, within=15, what="the console answering")
        yield url
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)


@asynccontextmanager
async def signed_in(
    settings: Settings, nats_url: str, database_url: str, name: str
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of an in-process console with operator `name` logged in."""
    async with asgi_client(settings, nats_url, database_url) as client:
        await log_in(client, name)
        yield client
