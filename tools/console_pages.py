"""`interlock bench --console-pages`: how long each page of the operator console takes to
render over the benchmark's database (queries and templates, in process, no network),
after the measured workflows are in it."""

from __future__ import annotations

import logging
import secrets
import statistics
import time
from typing import Any

import httpx
from pydantic import SecretStr

from interlock.config.plugins import installed
from interlock.config.settings import ConsoleOperator, Settings
from interlock.console import create_app
from interlock.console.operators import Operators, hash_password

PAGES = ("/", "/?human=1", "/?stuck=1", "/tasks", "/operations", "/slos")
ROUNDS = 5


async def page_times(
    s: Settings, nats_url: str, database_url: str, workflow: tuple[str, str] | None
) -> dict[str, Any]:
    """`{page: {"p50_ms", "max_ms"}}` over `ROUNDS` requests each, as a one-off viewer."""
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    password = secrets.token_urlsafe(16)
    viewer = ConsoleOperator(password_hash=SecretStr(hash_password(password)))
    app = create_app(
        s,
        nats_url,
        database_url,
        registry=installed().registry,
        operators=Operators({"bench": viewer}),
        session_key=secrets.token_urlsafe(32),
    )
    pages = [*PAGES, *([f"/workflows/{workflow[0]}/{workflow[1]}"] if workflow else [])]
    found: dict[str, Any] = {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
            await _log_in(client, password)
            for page in pages:
                times = []
                for _ in range(ROUNDS):
                    started = time.perf_counter()
                    (await client.get(page)).raise_for_status()
                    times.append((time.perf_counter() - started) * 1000)
                found[page] = {
                    "p50_ms": round(statistics.median(times), 1),
                    "max_ms": round(max(times), 1),
                }
    return found


async def _log_in(client: httpx.AsyncClient, password: str) -> None:
    login = (await client.get("/login")).text
    marker = 'name="csrf_token" value="'
    start = login.index(marker) + len(marker)
    token = login[start : login.index('"', start)]
    form = {"name": "bench", "password": password, "csrf_token": token, "next": "/"}
    response = await client.post("/login", data=form)
    if response.status_code != 303:
        raise RuntimeError(f"the console refused the benchmark's login: {response.status_code}")
