"""A supervised stack as the chaos tests drive it: its supervisor, a client connection, the
database and the approval desk, and a support workflow for a fresh simulated customer."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from nats.aio.client import Client
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.app.supervisor import Supervisor
from interlock.config.settings import Settings
from interlock.ops.signals import Clients
from interlock.simulators import action_count, seed_customer
from interlock.tools.demo.casefile import SHIPPED, environment, load
from interlock.tools.demo.runner import ApprovalDesk, Run, start_request
from interlock.tools.demo.scenarios import REQUEST

SWEEP_AFTER_S = 4.0
"""The open-job sweeper's bound in a chaos stack (and what its invariant checks allow)."""


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
