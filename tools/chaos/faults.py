"""Carrying out the fault schedule on a running stack, and measuring recovery.

Kills and crash points are counted per component kind (a crash point only once it fired);
broker and database stops run in the background, so component faults go on during them;
after each restart, recovery is the time until the projector's next committed transition.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import Coroutine
from contextlib import suppress
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.app.supervisor import Supervisor
from interlock.tools.chaos.drive import Driver, Workload
from interlock.tools.chaos.schedule import Fault, kind_of
from interlock.tools.chaos.servers import Servers

log = logging.getLogger("interlock.chaos")
RECOVERY_LIMIT_S = 120.0
LAST_COMMIT = "SELECT extract(epoch FROM max(recorded_at)) FROM audit WHERE accepted"


class FaultRunner:
    def __init__(
        self,
        *,
        supervisor: Supervisor,
        servers: Servers | None,
        driver: Driver,
        engine: AsyncEngine,
        crash_dir: Path,
        rng: random.Random,
    ) -> None:
        self._supervisor = supervisor
        self._servers = servers
        self._driver = driver
        self._engine = engine
        self._crash_dir = crash_dir
        self._rng = rng
        self.kills: Counter[str] = Counter()
        self.restarts: Counter[str] = Counter()
        self.recoveries: list[float] = []
        self._armed: list[Fault] = []
        self._background: set[asyncio.Task[None]] = set()
        self._held: set[str] = set()

    async def run(self, faults: list[Fault], workloads: list[Workload], began: float) -> None:
        for fault in faults:
            await asyncio.sleep(max(0.0, began + fault.at - time.monotonic()))
            try:
                await self._apply(fault, workloads)
            except Exception as exc:  # one fault failing to apply must not end the run
                log.warning("fault %s on %s not applied: %r", fault.kind, fault.target, exc)

    async def _apply(self, fault: Fault, workloads: list[Workload]) -> None:
        log.info("fault at %.1fs: %s %s %s", fault.at, fault.kind, fault.target, fault.seconds)
        if fault.kind == "kill":
            self._supervisor.kill(fault.target)
            self.kills[kind_of(fault.target)] += 1
        elif fault.kind == "crash" and not (self._crash_dir / fault.target).exists():
            (self._crash_dir / fault.target).touch()
            self._armed.append(fault)
        elif fault.kind == "hold" and fault.target not in self._held:
            self._spawn(self._hold(fault))
        elif fault.kind == "duplicate":
            sent = [w for w in workloads if w.sent]
            if sent:
                await self._driver.duplicate(self._rng.choice(sent))
        elif fault.kind in ("nats", "postgres") and self._servers is not None:
            self._spawn(self._outage(fault.kind, fault.seconds))

    async def _hold(self, fault: Fault) -> None:
        self._held.add(fault.target)
        try:
            await self._supervisor.hold(fault.target)
            await asyncio.sleep(fault.seconds)
        finally:
            await self._supervisor.release(fault.target)
            self._held.discard(fault.target)

    async def _outage(self, server: str, seconds: float) -> None:
        assert self._servers is not None
        stop = self._servers.stop_nats if server == "nats" else self._servers.stop_postgres
        start = self._servers.start_nats if server == "nats" else self._servers.start_postgres
        await stop()
        try:
            await asyncio.sleep(seconds)
        finally:
            await start()
        self.restarts[server] += 1
        back = time.time()
        recovery = await self._first_commit_after(back)
        log.info("%s back; first transition after %.2fs", server, recovery)
        self.recoveries.append(recovery)

    async def _first_commit_after(self, back: float) -> float:
        """Seconds from `back` to the next committed transition (requests keep arriving
        during the faults, so there is always work to commit); `RECOVERY_LIMIT_S` if none
        came that soon."""
        deadline = time.monotonic() + RECOVERY_LIMIT_S
        while time.monotonic() < deadline:
            with suppress(Exception):
                async with self._engine.connect() as conn:
                    last = (await conn.execute(text(LAST_COMMIT))).scalar()
                if last is not None and float(last) >= back:
                    return max(0.0, float(last) - back)
            await asyncio.sleep(0.1)
        return RECOVERY_LIMIT_S

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def settle(self) -> None:
        """Let every background fault finish; disarm crash points that never fired."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        for fault in self._armed:
            path = self._crash_dir / fault.target
            if path.exists():
                path.unlink(missing_ok=True)
            elif fault.component_kind is not None:
                self.kills[fault.component_kind] += 1
