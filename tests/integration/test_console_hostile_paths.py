"""Values in the console's paths an attacker chooses (a NUL character, an id out of range, a
name too long to be anyone's) are the caller's mistake: 4xx with one line, never a 500."""

from __future__ import annotations

import pytest

from interlock.config.settings import Settings
from tests.support.console import console_settings, csrf_of, signed_in


@pytest.fixture
def settings(tmp_path: object) -> Settings:
    return console_settings(Settings(home=tmp_path))


async def test_workflow_paths_with_a_nul_or_an_overlong_part_are_answered_404_not_500(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    paths = ["/workflows/acme%00/w-1", "/workflows/acme/w%001", f"/workflows/acme/{'w' * 5000}"]
    async with signed_in(settings, nats_url, database_url, "olga") as client:
        pages = [await client.get(path) for path in paths]
        apis = [await client.get(f"/api{path}") for path in paths]
        token = csrf_of((await client.get("/")).text)
        posted = await client.post(
            "/workflows/acme%00/w-1/signal", data={"action": "approve", "csrf_token": token}
        )

    assert [p.status_code for p in pages] == [404] * len(paths)
    assert [a.status_code for a in apis] == [404] * len(paths)
    assert posted.status_code in (303, 404)


async def test_a_dead_letter_id_out_of_range_is_not_a_server_error(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    async with signed_in(settings, nats_url, database_url, "olga") as client:
        token = csrf_of((await client.get("/operations")).text)
        posted = await client.post(
            f"/operations/dead-letters/{10**30}/redrive", data={"csrf_token": token}
        )

    assert posted.status_code in (303, 404)


async def test_a_cursor_at_the_edges_of_time_is_answered_not_a_server_error(
    settings: Settings, nats_url: str, database_url: str
) -> None:
    edges = [
        "0001-01-01T00:00:00+01:00~x",
        "9999-12-31T23:59:59-14:00~x",
        "2026-12-01T00:00:00+00:00~x",
    ]
    async with signed_in(settings, nats_url, database_url, "victor") as client:
        answers = [await client.get("/api/workflows", params={"before": b}) for b in edges]

    assert [a.status_code for a in answers] == [400, 400, 200]
    assert "before" in answers[0].json()["detail"]
