"""One chaos run: servers, components, workload and faults; then quiescence and the checks."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import shutil
import statistics
import time
import uuid
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.app.bootstrap import supervised
from interlock.app.composition import default_stack
from interlock.config import access
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts import subjects
from interlock.contracts.urls import nats_inbox, nats_servers
from interlock.messaging.letters import letters
from interlock.messaging.partition_streams import inbound_streams
from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.tools.chaos.drive import TENANT, Driver, Workload, persist, workloads
from interlock.tools.chaos.faults import FaultRunner
from interlock.tools.chaos.invariants import Findings, Started, check
from interlock.tools.chaos.schedule import KINDS, fingerprint, schedule
from interlock.tools.chaos.servers import Servers
from interlock.tools.demo import DEMO_ENV
from interlock.tools.demo.casefile import SHIPPED, environment, load

log = logging.getLogger("interlock.chaos")
SWEEP_AFTER_S = 20.0
QUIET_FOR_S = 5.0
QUIESCENCE_LIMIT_S = 420.0
APPROVAL_STATES = ("AWAITING_APPROVAL", "approval_required")


@dataclass
class ChaosReport:
    workflows: int
    seed: int
    faults: dict[str, int]
    findings: Findings
    recovery_p95_s: float | None
    schedule: str = ""
    broker_sync: str = "unknown"
    broken: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(self.findings.counts().values())

    def as_json(self) -> dict[str, Any]:
        return {
            "workflows": self.workflows,
            "seed": self.seed,
            "faults": self.faults,
            **self.findings.counts(),
            "recovery_p95_s": self.recovery_p95_s,
            "ok": self.ok,
        }


async def run_chaos(settings: Settings, count: int, duration: float, seed: int) -> ChaosReport:
    home = (settings.home / "chaos" / f"seed-{seed}-{uuid.uuid4().hex[:6]}").resolve()
    home.mkdir(parents=True)
    owned = settings.nats_url is None or settings.database_url is None
    servers = Servers(settings.model_copy(update={"home": home})) if owned else None
    if servers is not None:
        await servers.start()
    # The administrator's URLs, as `up` hands them to its supervisor.
    nats_url, database_url = access.as_admin(
        settings.model_copy(update={"home": home}) if owned else settings,
        servers.nats_url if servers else str(settings.nats_url),
        servers.database_url if servers else str(settings.database_url),
    )
    try:
        report = await _run(
            settings,
            home,
            servers=servers,
            nats_url=nats_url,
            database_url=database_url,
            count=count,
            duration=duration,
            seed=seed,
        )
    finally:
        if servers is not None:
            await servers.close()
    if report.ok:
        shutil.rmtree(home, ignore_errors=True)
    return report


def _component_environment(home: Path) -> dict[str, str]:
    """What the components run with: the demo's timings, a long approval window (answers may
    wait out a broker outage), the shipped request cases' classifier, a short sweeper bound
    and the crash-point directory."""
    fixture = load(SHIPPED)
    env = {**DEMO_ENV, "INTERLOCK_EXTERNAL_TIMEOUT": "1"}
    env["INTERLOCK_PARAMETERS"] = (
        '{"support": {"approval_sla_seconds": 3600, "retry_delay_scale": 1.0}}'
    )
    env |= environment(SHIPPED, fixture, env)
    env["INTERLOCK_SWEEP_AFTER"] = str(SWEEP_AFTER_S)
    env["INTERLOCK_CRASHPOINTS"] = str(home / "crash")
    return env


async def _run(
    settings: Settings,
    home: Path,
    *,
    servers: Servers | None,
    nats_url: str,
    database_url: str,
    count: int,
    duration: float,
    seed: int,
) -> ChaosReport:
    (home / "crash").mkdir()
    os.environ.update(_component_environment(home))
    # Components are given settings, not the environment: read them with the run's own.
    component_settings = Settings(home=home, secrets_dir=settings.secrets_dir)
    names = default_stack(partitions=component_settings.projector_partitions)
    faults = schedule(seed, duration, names)
    rng = random.Random(seed)
    work = workloads(random.Random(seed + 1), count, installed().registry.workflow_types())
    async with supervised(component_settings, nats_url, database_url, names) as supervisor:
        patient = {"max_reconnect_attempts": -1, "reconnect_time_wait": 0.5, "error_cb": _quietly}
        nc = await nats.connect(
            nats_servers(nats_url),
            name="interlock-chaos",
            inbox_prefix=nats_inbox(nats_url),
            **patient,
        )
        bus = await Clients.connect(component_settings, nats_url, "chaos", **patient)
        engine = queries.open_reader(database_url, pool_size=4)
        try:
            cases = {c.id: c for c in load(SHIPPED).cases}
            driver = Driver(
                bus,
                nc,
                engine=engine,
                database_url=database_url,
                cases=cases,
                run=uuid.uuid4().hex[:8],
            )
            runner = FaultRunner(
                supervisor=supervisor,
                servers=servers,
                driver=driver,
                engine=engine,
                crash_dir=home / "crash",
                rng=rng,
            )
            began = time.monotonic()
            answering = asyncio.create_task(_answer(driver, work))
            await asyncio.gather(
                # Requests keep coming while faults happen: every restart finds work in flight.
                _start_all(driver, work, began, duration * 0.9),
                runner.run(faults, work, began),
            )
            await asyncio.sleep(max(0.0, began + duration - time.monotonic()))
            await runner.settle()
            await quiesce(nc, engine, work)
            answering.cancel()
            started = [_started(w) for w in work if w.started]
            dead = [(d.id, d.body) async for d in letters(nc.jetstream())]
            findings = await check(engine, started, dead, sweep_after=SWEEP_AFTER_S)
        finally:
            await engine.dispose()
            await bus.close()
            await nc.close()
    counts = {kind: runner.kills[kind] for kind in KINDS}
    counts |= {
        "nats_restarts": runner.restarts["nats"],
        "postgres_restarts": runner.restarts["postgres"],
    }
    p95 = _p95(runner.recoveries)
    return ChaosReport(
        count,
        seed,
        counts,
        findings,
        p95,
        schedule=fingerprint(faults),
        broker_sync=servers.sync() if servers else "unknown",
        broken=findings.broken(),
    )


async def _quietly(exc: Exception) -> None:
    """The broker is restarted on purpose: its disconnections are expected, not errors."""
    log.debug("chaos connection: %r", exc)


def _started(w: Workload) -> Started:
    customer = None if w.scenario.workflow_type == "request" else f"chaos-{w.start_id[6:]}"
    return Started(w.workflow_id, w.scenario.workflow_type, customer)


async def _start_all(driver: Driver, work: list[Workload], began: float, within: float) -> None:
    """Publish the requests evenly over `within` seconds."""
    gap = within / max(1, len(work))
    for i, w in enumerate(work):
        await asyncio.sleep(max(0.0, began + i * gap - time.monotonic()))
        await driver.start(w)


STATES = "SELECT id, state FROM workflows WHERE id = ANY(:ids)"


async def _answer(driver: Driver, work: list[Workload]) -> None:
    """Answer every workflow that waits for its scenario's approval, rejection or cancel."""
    while True:
        waiting = {
            w.workflow_id: w for w in work if w.started and w.scenario.answer and not w.answered
        }
        if waiting:
            rows = await persist(partial(_states, driver, list(waiting)), "reading states")
            for workflow_id, state in rows:
                if state in APPROVAL_STATES:
                    view = await driver.view(workflow_id)
                    if view is not None and view["state"] in APPROVAL_STATES:
                        await driver.answer(waiting[workflow_id], view)
        await asyncio.sleep(0.5)


async def _states(driver: Driver, ids: list[str]) -> list[tuple[str, str]]:
    async with driver.engine.connect() as conn:
        result = await conn.execute(text(STATES), {"ids": ids})
        return [(r[0], r[1]) for r in result]


async def quiesce(
    nc: Client, engine: AsyncEngine, work: list[Workload], *, limit: float = QUIESCENCE_LIMIT_S
) -> None:
    """Wait until nothing moves: every answer sent, no message pending anywhere, no row
    waiting to be relayed, for `QUIET_FOR_S` in a row (at most `limit` seconds). The
    invariants are read after this: a row the relay has yet to reach is not a stuck one."""
    deadline = time.monotonic() + limit
    calm_since: float | None = None
    while time.monotonic() < deadline:
        busy = await persist(lambda: _busy(nc, engine, work), "checking quiescence")
        now = time.monotonic()
        calm_since = None if busy else calm_since or now
        if calm_since is not None and now - calm_since >= QUIET_FOR_S:
            return
        await asyncio.sleep(0.5)
    log.warning("no quiescence within %.0fs; checking anyway", limit)


async def _busy(nc: Client, engine: AsyncEngine, work: list[Workload]) -> bool:
    unanswered = [w.workflow_id for w in work if w.started and w.scenario.answer and not w.answered]
    async with engine.connect() as conn:
        rows = (await conn.execute(text(STATES), {"ids": unanswered})).all()
    if any(state in APPROVAL_STATES for _, state in rows):
        return True  # an answer is still to be sent (a workflow that went elsewhere needs none)
    js = nc.jetstream()
    for stream in [*await inbound_streams(js), subjects.STREAM_JOBS]:
        for consumer in await js.consumers_info(stream):
            if consumer.num_pending or consumer.num_ack_pending:
                return True
    async with engine.connect() as conn:
        moving = (await conn.execute(text(MOVING), {"tenant": TENANT})).scalar()
    return bool(moving)


MOVING = """
SELECT EXISTS (SELECT 1 FROM workflows
               WHERE tenant_id LIKE :tenant || '%' AND updated_at > now() - interval '3 seconds')
    OR EXISTS (SELECT 1 FROM outbox o WHERE o.published_at IS NULL AND NOT EXISTS (
                   SELECT 1 FROM relay_cursor c WHERE (o.txid, o.id) <= (c.txid, c.last_id)))
"""


def _p95(values: list[float]) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 2)
    return round(statistics.quantiles(values, n=20, method="inclusive")[-1], 2)
