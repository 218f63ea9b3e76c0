"""The chaos tier's stack: every component of every installed type as a supervised child
process, with a short sweeper bound, wide windows around lost answers, the shipped request
cases' classifier and crash points armed from a directory, shared by a module's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import nats
import pytest

from interlock.app.bootstrap import supervised
from interlock.app.composition import default_stack
from interlock.config.settings import Settings
from interlock.messaging.crashpoints import ENV as CRASHPOINTS
from interlock.ops.signals import Clients
from interlock.projector.store.database import database_pool
from interlock.tools.demo.runner import ApprovalDesk
from tests.support.chaos_stack import Stack, chaos_environment


@pytest.fixture(scope="module")
async def stack(
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    """Every stage service in its own process."""
    async with running_stack(
        e2e_settings, module_nats, module_database, tmp_path_factory, stage_host=False
    ) as running:
        yield running


@pytest.fixture(scope="module")
async def hosted_stack(
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    """Every stage service in the one process of the stage host."""
    async with running_stack(
        e2e_settings, module_nats, module_database, tmp_path_factory, stage_host=True
    ) as running:
        yield running


@pytest.fixture(scope="module")
async def quiet_sweeper_stack(
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    """Every stage service in its own process, the open-job sweeper's bound longer than a
    test: a job's deliveries are the stage's own (a re-dispatched job would restart their
    count, and a stage that keeps failing would never give up)."""
    async with running_stack(
        e2e_settings,
        module_nats,
        module_database,
        tmp_path_factory,
        stage_host=False,
        sweep_after=3600,
    ) as running:
        yield running


@pytest.fixture(scope="module")
async def quiet_hosted_stack(
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[Stack]:
    """As `quiet_sweeper_stack`, every stage service in the one process of the stage host
    (a lighter stack, for a test whose point is not a stage's own process)."""
    async with running_stack(
        e2e_settings,
        module_nats,
        module_database,
        tmp_path_factory,
        stage_host=True,
        sweep_after=3600,
    ) as running:
        yield running


@asynccontextmanager
async def running_stack(
    e2e_settings: Settings,
    module_nats: str,
    module_database: str,
    tmp_path_factory: pytest.TempPathFactory,
    *,
    stage_host: bool,
    sweep_after: float | None = None,
) -> AsyncIterator[Stack]:
    """`sweep_after`: the open-job sweeper's bound instead of the chaos tier's short one."""
    crash_dir = tmp_path_factory.mktemp("crashpoints")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CRASHPOINTS, str(crash_dir))
        patch.setenv("INTERLOCK_EXTERNAL_TIMEOUT", "3")  # a wide window around lost answers
        chaos_environment(patch)
        if sweep_after is not None:
            patch.setenv("INTERLOCK_SWEEP_AFTER", str(sweep_after))
        # The components are given their settings, not the environment: read them anew.
        settings = Settings(home=e2e_settings.home, secrets_dir=e2e_settings.secrets_dir)
        names = default_stack(partitions=settings.projector_partitions, stage_host=stage_host)
        async with supervised(settings, module_nats, module_database, names) as supervisor:
            bus = await Clients.connect(settings, module_nats, "chaos")
            admin = await nats.connect(module_nats)
            engine = database_pool(module_database, pool_size=4)
            desk = ApprovalDesk(bus.approvals)
            await desk.start()
            try:
                yield Stack(
                    supervisor,
                    bus,
                    admin,
                    engine,
                    desk,
                    module_database,
                    crash_dir,
                    e2e_settings.home,
                    settings,
                    module_nats,
                )
            finally:
                await desk.stop()
                await engine.dispose()
                await bus.close()
                await admin.drain()
