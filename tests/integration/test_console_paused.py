"""The console's operations page shows what is paused, since when, by whom and how much it
holds back, as `interlock paused` does, over real PostgreSQL."""

from __future__ import annotations

import asyncpg
import pytest

from interlock.config.settings import Settings
from interlock.projector.store.pauses import Scope, pause, resume
from tests.support.console import console_settings, signed_in


@pytest.fixture
def settings(tmp_path: object) -> Settings:
    return console_settings(Settings(home=tmp_path))


async def test_the_operations_page_shows_each_pause_and_since_when(
    settings: Settings, nats_url: str, database_url: str, db: asyncpg.Connection
) -> None:
    await pause(db, Scope("support", "acme"), "ops-1", "supplier outage")
    await pause(db, Scope("invoice", "globex", "inv-7"), "ops-2")
    since = await db.fetchval("SELECT paused_at FROM pauses WHERE workflow_type = 'support'")

    async with signed_in(settings, nats_url, database_url, "victor") as client:
        page = (await client.get("/operations")).text
        await resume(db, Scope("support"), "ops-1")
        await resume(db, Scope("invoice"), "ops-2")
        after = (await client.get("/operations")).text

    assert 'id="paused"' in page
    assert "supplier outage" in page
    assert "ops-1" in page
    assert since.strftime("%Y-%m-%d %H:%M:%S") in page
    assert "/workflows/globex/inv-7" in page
    assert "every workflow" in page
    assert "Nothing is paused." in after
