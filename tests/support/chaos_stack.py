"""A supervised stack as the chaos tests drive it: its supervisor, a client connection, the
database and the approval desk, and a support workflow for a fresh simulated customer."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import nats
import pytest
from nats.aio.client import Client
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.app.bootstrap import supervised
from interlock.app.composition import default_stack
from interlock.app.supervisor import Supervisor
from interlock.config.settings import Settings
from interlock.messaging.crashpoints import ENV as CRASHPOINTS
from interlock.ops.signals import Clients
from interlock.projector.store.database import database_pool
from interlock.simulators import action_count, seed_customer
from interlock.tools.demo.casefile import SHIPPED, environment, load
from interlock.tools.demo.runner import ApprovalDesk, Run, start_request
from interlock.tools.demo.scenarios import REQUEST

SWEEP_AFTER_S = 4.0
"""The open-job sweeper's bound in a chaos stack (and what its invariant checks allow)."""


class Kind(TypedDict):
    stage_host: bool
    sweep_after: float | None
    """The open-job sweeper's bound, if not `SWEEP_AFTER_S`."""


SHARED_STACKS: dict[str, Kind] = {
    "stack": {"stage_host": False, "sweep_after": None},
    "hosted_stack": {"stage_host": True, "sweep_after": None},
    "quiet_sweeper_stack": {"stage_host": False, "sweep_after": 3600},
    "quiet_hosted_stack": {"stage_host": True, "sweep_after": 3600},
}
"""The chaos tier's shared stacks, by the name of the fixture that gives one (see
tests/chaos/conftest.py): the modules asking for one kind run one after another."""


def chaos_environment(patch: pytest.MonkeyPatch) -> None:
    """What every chaos stack's components run with: a short sweeper bound, approvals that
    never expire while a crash is recovered (up to an ack wait), fast retries, and the
    shipped request cases' classifier."""
    patch.setenv("INTERLOCK_SWEEP_AFTER", str(SWEEP_AFTER_S))
    patch.setenv(
        "INTERLOCK_PARAMETERS",
        '{"support": {"approval_sla_seconds": 3600, "retry_delay_scale": 0.02}}',
    )
    for key, value in environment(SHIPPED, load(SHIPPED), os.environ).items():
        patch.setenv(key, value)


@dataclass
class Stack:
    supervisor: Supervisor
    bus: Clients
    admin: Client
    """Acts as only the relay or an operator may: the crashes and losses it stands for."""
    engine: AsyncEngine
    desk: ApprovalDesk
    dsn: str
    crash_dir: Path
    home: Path
    settings: Settings
    """The installation's settings, as its components read them (its job-signing key)."""
    nats_url: str = ""
    """The broker as its administrator (for the CLI run against this stack)."""

    async def workflow(self, faults: dict[str, list[str]] | None = None) -> Run:
        customer = f"chaos-{uuid.uuid4().hex[:10]}"
        await seed_customer(self.dsn, customer, faults=faults)
        run = Run("chaos", "", "chaos", customer, self.bus, self.engine, self.dsn)
        await start_request(run, dict(REQUEST), before_publish=self.desk.watch)
        return run

    async def effects(self, run: Run) -> int:
        return await action_count(self.dsn, customer_id=run.customer_id)


@asynccontextmanager
async def running_stack(
    e2e_settings: Settings,
    nats_url: str,
    database_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    *,
    stage_host: bool,
    projector_host: bool = False,
    sweep_after: float | None = None,
) -> AsyncIterator[Stack]:
    """Every component of every installed type as a supervised child process, on this broker
    (its administrator's URL) and database, crash points armed from a directory of its own.
    `sweep_after`: the open-job sweeper's bound instead of the chaos tier's short one;
    `projector_host`: several partitions in one process (else one each)."""
    crash_dir = tmp_path_factory.mktemp("crashpoints")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CRASHPOINTS, str(crash_dir))
        patch.setenv("INTERLOCK_EXTERNAL_TIMEOUT", "3")  # a wide window around lost answers
        chaos_environment(patch)
        if sweep_after is not None:  # the stacks of the tests that exhaust a stage
            patch.setenv("INTERLOCK_SWEEP_AFTER", str(sweep_after))
            # Five redeliveries from 0.2 s on (6.2 s of waiting) instead of from 1 s on (31 s):
            # those tests wait for the stage to give up, not for the default backoff. The
            # other stacks keep it, as a broker or component restart needs it.
            patch.setenv("INTERLOCK_STAGE_REDELIVERY_S", "0.2")
        # The components are given their settings, not the environment: read them anew.
        settings = Settings(home=e2e_settings.home, secrets_dir=e2e_settings.secrets_dir)
        names = default_stack(
            partitions=settings.projector_partitions,
            stage_host=stage_host,
            projector_host=projector_host,
        )
        async with supervised(settings, nats_url, database_url, names) as supervisor:
            bus = await Clients.connect(settings, nats_url, "chaos")
            admin = await nats.connect(nats_url)
            engine = database_pool(database_url, pool_size=4)
            desk = ApprovalDesk(bus.approvals)
            await desk.start()
            try:
                yield Stack(
                    supervisor,
                    bus,
                    admin,
                    engine,
                    desk,
                    database_url,
                    crash_dir,
                    e2e_settings.home,
                    settings,
                    nats_url,
                )
            finally:
                await desk.stop()
                await engine.dispose()
                await bus.close()
                await admin.drain()
