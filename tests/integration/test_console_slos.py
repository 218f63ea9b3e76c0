"""The console's SLO page over real PostgreSQL: the outcome figures per type and tenant, as
the relay's gauges count them, each linked to the workflows behind it; any viewer may read it."""

from __future__ import annotations

import asyncpg
import pytest

from interlock.config.settings import Settings
from tests.support.audit_rows import APPROVED, DONE, EXECUTED, MOVED, START, TO_APPROVAL, trail
from tests.support.console import console_settings, signed_in


@pytest.fixture
def settings(tmp_path: object) -> Settings:
    return console_settings(Settings(home=tmp_path))


async def test_the_slo_page_shows_each_types_figures_and_links_to_its_workflows(
    settings: Settings, nats_url: str, database_url: str, db: asyncpg.Connection
) -> None:
    await trail(db, "clean", [START, MOVED, TO_APPROVAL, APPROVED, EXECUTED, DONE])
    await trail(db, "failed", [START, ("PERMANENT_ERROR", "CLASSIFYING", "FAILED", 300)],
                error_class="ValueError")  # fmt: skip
    await trail(db, "twice", [START, EXECUTED, EXECUTED], tenant="globex")

    async with signed_in(settings, nats_url, database_url, "victor") as client:
        page = await client.get("/slos")

    assert page.status_code == 200
    acme, globex = page.text.split('<td><a href="/?type=support&amp;tenant=')[1:3]
    assert acme.startswith('acme">support</a></td><td>acme</td>')
    assert '<td class="num">2</td>' in acme  # started
    assert "50 % <small>(1)</small>" in acme  # one of two finished without rescue
    assert "p50 500 s" in acme  # COMPLETED: 600 s ago to 100 s ago
    assert 'href="/?type=support&amp;tenant=acme&amp;state=FAILED"' in acme
    assert '<td class="num fail">1</td>' in globex  # an effect committed twice
    trend = page.text.split('id="trend"')[1]
    assert trend.count('<th scope="col">') == 1 + 6  # the type, and six hours
    # two finished minutes ago, one without rescue (in one hour, or either side of its start)
    assert "50 % <small>(1/2)</small>" in trend or (
        "100 % <small>(1/1)</small>" in trend and "0 % <small>(0/1)</small>" in trend
    )
