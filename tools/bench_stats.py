"""Measurements for `interlock bench`: transitions, per-hop latency, CPU and memory."""

from __future__ import annotations

import asyncio
import os
import statistics
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import psutil
from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.ops import queries


async def hop_latencies(engine: AsyncEngine, workflow_ids: list[str]) -> dict[str, Any]:
    """p50/p95 of the two hops every transition makes, from the audit timestamps.

    `decide_commit`: an event's creation to the commit of its decision (broker in, projector).
    `dispatch_work`: a commit to the next event's creation (outbox relay, broker out, stage
    work or the approver's reaction, broker in).
    """
    rows = await queries.accepted_timestamps(engine, workflow_ids)
    hops: dict[str, list[float]] = defaultdict(list)
    previous: dict[str, Any] = {}
    for workflow_id, occurred, recorded, _ in rows:
        hops["decide_commit"].append((recorded - occurred).total_seconds() * 1000)
        if workflow_id in previous:
            hops["dispatch_work"].append((occurred - previous[workflow_id]).total_seconds() * 1000)
        previous[workflow_id] = recorded
    return {name: _quantiles(values) for name, values in hops.items()}


def _quantiles(values: list[float]) -> dict[str, float]:
    if len(values) < 2:
        return {"p50_ms": round(values[0], 2) if values else 0.0, "p95_ms": 0.0}
    q = statistics.quantiles(values, n=20)
    return {"p50_ms": round(statistics.median(values), 2), "p95_ms": round(q[18], 2)}


DRIVER = "bench-driver"


class ResourceSampler:
    """CPU time and peak resident memory of the component processes and this driver, in
    total and per component (where the time goes is the useful part of a benchmark)."""

    def __init__(self, pids: dict[str, int]) -> None:
        named = {**pids, DRIVER: os.getpid()}
        self._procs = {
            name: p
            for name, p in ((n, self._proc(pid)) for n, pid in named.items())
            if p is not None
        }
        self._cpu0 = self._cpu()
        self._cpu1 = self._cpu0
        self._peak = 0

    @staticmethod
    def _proc(pid: int) -> psutil.Process | None:
        try:
            return psutil.Process(pid)
        except psutil.Error:
            return None

    def _cpu(self) -> dict[str, float]:
        used: dict[str, float] = {}
        for name, p in self._procs.items():
            with suppress(psutil.Error):
                t = p.cpu_times()
                used[name] = t.user + t.system
        return used

    def _sample(self) -> None:
        rss = 0
        for p in self._procs.values():
            with suppress(psutil.Error):
                rss += p.memory_info().rss
        self._peak = max(self._peak, rss)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async def sample() -> None:
            while True:
                self._sample()
                await asyncio.sleep(0.2)

        self._cpu0 = self._cpu()
        task = asyncio.create_task(sample())
        try:
            yield
        finally:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task
            self._cpu1 = self._cpu()

    def summary(self, wall: float) -> dict[str, Any]:
        by_component = {
            name: round(self._cpu1.get(name, 0.0) - start, 2) for name, start in self._cpu0.items()
        }
        cpu = sum(by_component.values())
        return {
            "cpu_seconds": round(cpu, 2),
            "cpu_percent": round(100 * cpu / wall, 1) if wall else 0.0,
            "cpu_by_component": dict(sorted(by_component.items(), key=lambda kv: -kv[1])),
            "peak_rss_mb": round(self._peak / 2**20, 1),
            "processes": len(self._procs),
        }
