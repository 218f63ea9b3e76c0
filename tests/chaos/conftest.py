"""The chaos tier's stack: every support component as a supervised child process, with a
short sweeper bound and wide windows around lost answers, shared by the module's tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import nats
import pytest

from interlock.composition import default_stack
from interlock.projector.store.database import database_pool
from interlock.runtime import supervised
from interlock.settings import Settings
from interlock.tools.demo.runner import ApprovalDesk
from tests.support.chaos_stack import Stack

SWEEP_AFTER_S = 4.0


@pytest.fixture(scope="module")
async def stack(
    e2e_settings: Settings, module_nats: str, module_database: str
) -> AsyncIterator[Stack]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INTERLOCK_EXTERNAL_TIMEOUT", "3")  # a wide window around lost answers
        patch.setenv("INTERLOCK_SWEEP_AFTER", str(SWEEP_AFTER_S))
        # Crash recovery takes up to an ack wait; no approval may expire meanwhile.
        patch.setenv(
            "INTERLOCK_PARAMETERS",
            '{"support": {"approval_sla_seconds": 3600, "retry_delay_scale": 0.02}}',
        )
        async with supervised(
            e2e_settings, module_nats, module_database, default_stack("support")
        ) as supervisor:
            nc = await nats.connect(module_nats)
            engine = database_pool(module_database, pool_size=4)
            desk = ApprovalDesk(nc)
            await desk.start()
            try:
                yield Stack(supervisor, nc, engine, desk, module_database)
            finally:
                await desk.stop()
                await engine.dispose()
                await nc.drain()
