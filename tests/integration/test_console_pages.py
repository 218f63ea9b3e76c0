"""The console's pages over real PostgreSQL: nothing without a login (401 for the API, a
redirect for pages), login limits, roles and CSRF on every form, and the pages' contents."""

from __future__ import annotations

import asyncpg
import pytest

from interlock.config.settings import Settings
from interlock.console.limiter import LoginLimiter
from tests.support.console import (
    PASSWORD,
    ManualClock,
    asgi_client,
    console_settings,
    csrf_of,
    log_in,
    signed_in,
)
from tests.support.workflow_rows import insert_workflow


@pytest.fixture
def settings(tmp_path: object) -> Settings:
    return console_settings(Settings(home=tmp_path))


async def test_without_a_session_pages_redirect_to_login_and_the_api_answers_401(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    async with asgi_client(settings, nats_url, database_url) as client:
        for page in ("/", "/tasks", "/operations", "/workflows/acme/w-1"):
            response = await client.get(page)
            assert response.status_code == 303
            assert response.headers["location"].startswith("/login?next=")
        api = await client.get("/api/workflows")
        assert api.status_code == 401
        assert api.json() == {"error": "unauthenticated"}
        posted = await client.post("/workflows/acme/w-1/signal", data={"action": "approve"})
        assert posted.status_code == 303


async def test_login_sets_a_signed_httponly_samesite_cookie(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    async with asgi_client(settings, nats_url, database_url) as client:
        response = await log_in(client, "alice")
        assert response.status_code == 303
        cookie = response.headers["set-cookie"].lower()
        assert "httponly" in cookie
        assert "samesite=strict" in cookie
        assert (await client.get("/")).status_code == 200
        client.cookies.set("interlock_console", "forged.value")
        assert (await client.get("/api/workflows")).status_code == 401


async def test_a_wrong_password_is_refused_and_repeated_failures_slow_down_that_name_only(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    clock = ManualClock()
    limiter = LoginLimiter(free=5, base=2.0, cap=60.0, clock=clock)
    async with asgi_client(settings, nats_url, database_url, limiter) as client:
        statuses = [(await log_in(client, "alice", "wrong")).status_code for _ in range(6)]
        assert statuses == [401] * 5 + [429]
        waiting = await log_in(client, "alice")  # not even checked during the delay
        assert (waiting.status_code, waiting.headers["retry-after"]) == (429, "2")
        assert (await log_in(client, "olga")).status_code == 303  # same client address
        assert (await log_in(client, "x" * 100_000, "x")).status_code == 400
        clock.now += 2
        assert (await log_in(client, "alice")).status_code == 303  # no lockout after the delay
        assert len(limiter) == 0


async def test_a_login_without_the_csrf_token_is_refused(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    async with asgi_client(settings, nats_url, database_url) as client:
        await client.get("/login")
        response = await client.post("/login", data={"name": "alice", "password": PASSWORD})
        assert response.status_code == 403
        assert (await client.get("/api/workflows")).status_code == 401


@pytest.fixture
async def seeded(database_url: str) -> str:
    """A database with a workflow awaiting approval, one in review (another tenant), one
    completed and one stuck."""
    db = await asyncpg.connect(database_url)
    try:
        await insert_workflow(db, "t-approve", "AWAITING_APPROVAL", idle_s=30)
        await insert_workflow(db, "t-review", "MANUAL_REVIEW", idle_s=20, tenant_id="globex")
        await insert_workflow(db, "t-done", "COMPLETED", idle_s=10)
        await insert_workflow(db, "t-stuck", "CLASSIFYING", idle_s=3600)
    finally:
        await db.close()
    return database_url


async def test_the_list_filters_counts_and_pages(
    settings: Settings, nats_url: str, seeded: str
) -> None:
    async with signed_in(settings, nats_url, seeded, "victor") as client:

        async def ids(**query: str) -> list[str]:
            body = (await client.get("/api/workflows", params=query)).json()
            return [w["id"] for w in body["workflows"]]

        assert await ids() == ["t-done", "t-review", "t-approve", "t-stuck"]
        assert await ids(human="1") == ["t-review", "t-approve"]
        assert await ids(stuck="1") == ["t-stuck"]
        assert await ids(tenant="globex") == ["t-review"]
        assert await ids(state="COMPLETED", type="support") == ["t-done"]
        assert await ids(q="t-a") == ["t-approve"]
        assert await ids(q="%") == []
        counts = (await client.get("/api/workflows")).json()["counts"]
        assert {"workflow_type": "support", "state": "COMPLETED", "n": 1} in counts
        page = await client.get("/")
        assert page.status_code == 200
        assert "t-approve" in page.text
        partial = await client.get("/", headers={"X-Console-Refresh": "1"})
        assert "<tbody" not in partial.text
        assert "t-approve" in partial.text


async def test_pages_paginate_newest_first_by_keyset(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    db = await asyncpg.connect(database_url)
    try:
        for i in range(120):
            await insert_workflow(db, f"p-{i:03}", "COMPLETED", idle_s=i)
    finally:
        await db.close()
    async with signed_in(settings, nats_url, database_url, "victor") as client:
        seen: list[str] = []
        cursor = ""
        while True:
            body = (await client.get("/api/workflows", params={"before": cursor})).json()
            seen += [w["id"] for w in body["workflows"]]
            cursor = body["next"]
            if not cursor:
                break
        assert seen == [f"p-{i:03}" for i in range(120)]


async def test_every_page_renders_for_a_viewer_who_is_offered_no_forms(
    settings: Settings, nats_url: str, seeded: str
) -> None:
    async with signed_in(settings, nats_url, seeded, "victor") as client:
        for page in ("/", "/tasks", "/operations", "/workflows/acme/t-approve"):
            response = await client.get(page)
            assert response.status_code == 200, page
            assert 'name="action"' not in response.text, page
        assert (await client.get("/workflows/globex/t-approve")).status_code == 404
        inbox = (await client.get("/tasks")).text
        assert "t-approve" in inbox
        assert "t-review" in inbox
        assert "t-done" not in inbox
        operations = (await client.get("/operations")).text
        assert "t-stuck" in operations


async def test_signals_need_the_csrf_token_and_a_role_that_may_send_them(
    settings: Settings, nats_url: str, seeded: str
) -> None:
    async with signed_in(settings, nats_url, seeded, "alice") as client:
        page = await client.get("/workflows/acme/t-approve")
        assert 'value="approve"' in page.text
        form = {"action": "approve", "next": "/tasks"}
        forged = await client.post("/workflows/acme/t-approve/signal", data=form)
        assert forged.status_code == 403
        wrong = {**form, "csrf_token": "not-the-token"}
        assert (
            await client.post("/workflows/acme/t-approve/signal", data=wrong)
        ).status_code == 403
    async with signed_in(settings, nats_url, seeded, "victor") as client:
        token = csrf_of((await client.get("/")).text)
        viewer = await client.post(
            "/workflows/acme/t-approve/signal", data={**form, "csrf_token": token}
        )
        assert viewer.status_code == 403


async def test_an_action_the_state_does_not_allow_is_not_sent(
    settings: Settings, nats_url: str, seeded: str
) -> None:
    async with signed_in(settings, nats_url, seeded, "olga") as client:
        token = csrf_of((await client.get("/")).text)
        response = await client.post(
            "/workflows/acme/t-done/signal",
            data={"action": "approve", "next": "/", "csrf_token": token},
        )
        assert response.status_code == 303
        page = await client.get("/")
        assert "Approve is not possible in COMPLETED" in page.text


async def test_a_workflow_page_shows_its_tenants_workflow_its_repeats_and_its_jaeger_trace(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    db = await asyncpg.connect(database_url)
    try:
        await insert_workflow(db, "same-id", "AWAITING_APPROVAL", tenant_id="acme")
        await insert_workflow(db, "same-id", "COMPLETED", tenant_id="globex")
        await db.execute(
            """
            INSERT INTO audit (workflow_id, tenant_id, workflow_type, event_id, event_type,
                               from_state, to_state, accepted, actor_id, actor_role,
                               state_version, guard_results, trace_id, occurred_at)
            VALUES ('same-id', 'globex', 'support', 'e-1', 'START', NULL, 'COMPLETED', true,
                    'crm', 'upstream', 1, '[]', $1, now())
            """,
            trace_id,
        )
        await db.execute(
            """UPDATE workflows SET replays = '{"idempotent_replay": 3}'
               WHERE tenant_id = 'acme' AND id = 'same-id'"""
        )
    finally:
        await db.close()
    jaeger = settings.model_copy(update={"jaeger_url": "http://jaeger.example:16686"})
    async with signed_in(jaeger, nats_url, database_url, "victor") as client:
        acme = (await client.get("/workflows/acme/same-id")).text
        globex = (await client.get("/workflows/globex/same-id")).text
        assert 'id="current-state">AWAITING_APPROVAL<' in acme
        assert 'id="current-state">COMPLETED<' in globex
        assert f'href="http://jaeger.example:16686/trace/{trace_id}"' in globex
        assert "No trace recorded." in acme
        assert "idempotent_replay \N{MULTIPLICATION SIGN}3" in acme
        assert "Repeated requests" not in globex
        assert (await client.get("/workflows/initech/same-id")).status_code == 404


async def test_malformed_filter_values_are_answered_400_not_500(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    """A cursor that is not `<timestamp>~<id>` and a value with a NUL character are the
    caller's mistake (400 naming the filter), never a server error."""
    bad = [
        {"before": "garbage~x"},
        {"before": "2026-12-01T00:00:00~"},
        {"tenant": "acme\x00"},
        {"q": "w\x00"},
        {"type": "support\x00"},
    ]
    async with signed_in(settings, nats_url, database_url, "victor") as client:
        answers = [await client.get("/api/workflows", params=query) for query in bad]
        page = await client.get("/", params={"before": "garbage~x"})
        good = await client.get("/api/workflows", params={"tenant": "acme"})

    assert [a.status_code for a in answers] == [400] * len(bad)
    assert answers[0].json()["error"] == "bad_filter"
    assert "before" in answers[0].json()["detail"]
    assert page.status_code == 400
    assert good.status_code == 200
