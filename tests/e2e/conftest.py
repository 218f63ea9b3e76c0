"""Whole-stack fixtures live in tests/conftest.py (shared with the chaos tier); here, the one
run of every demo scenario that several modules only read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from interlock.config.secrets import Secrets
from interlock.config.settings import Settings
from interlock.tools.demo import ScenarioResult, run_demo
from interlock.tools.demo.scenarios import SCENARIOS
from tests.conftest import clean_broker, demo_timings, fresh_database, installation


@dataclass(frozen=True)
class DemoRun:
    settings: Settings
    """The installation's settings the components ran with (its home)."""
    database_url: str
    """The database the run left its histories in: nothing else writes to it."""
    outcomes: list[ScenarioResult]


@pytest.fixture(scope="session")
async def every_scenario(
    stack_urls: tuple[str, str],
    template_database: str,
    session_secrets: Secrets,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[DemoRun]:
    """Every demo scenario through the whole stack (components as real processes, stopped
    when the run is over), on a fresh database and a broker without streams, with the demo's
    short timings: run once for the modules that read what it left (a run takes a stack's
    start-up and every scenario's waits)."""
    nats_url, server_url = stack_urls
    async with fresh_database(server_url, template_database) as database_url:
        await clean_broker(nats_url)
        with demo_timings():
            settings = installation(tmp_path_factory, session_secrets)
            outcomes = await run_demo(settings, nats_url, database_url, list(SCENARIOS), quiet=True)
        yield DemoRun(settings, database_url, outcomes)
