"""`interlock bench --type T`: a plugin's own workload, measured.

A workflow type that ships demo scenarios (`Plugin.scenarios`) is benchmarked with one of them
(default `happy_path`): each workflow is that scenario's request with a fresh token, played by
its script, timed from publication until the workflow is in the scenario's expected state
(read from the projector's store, polled every 50 ms: the figures are that coarse).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from interlock.app.bootstrap import supervised
from interlock.app.composition import stack_of
from interlock.config.settings import Settings
from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.tools.bench_servers import ServerWindow
from interlock.tools.bench_stats import ResourceSampler
from interlock.tools.demo.plugins import Announcements, PluginRun, PluginScenario, plugin_scenarios
from interlock.tools.errors import NoWorkload


def workload(workflow_type: str, scenario: str) -> PluginScenario:
    found = [s for s in plugin_scenarios([workflow_type]) if s.scenario.name == scenario]
    if not found:
        names = [s.scenario.name for s in plugin_scenarios([workflow_type])]
        raise NoWorkload(
            f"workflow type {workflow_type!r} ships no scenario {scenario!r} to benchmark "
            f"with (its scenarios: {', '.join(names) or 'none'})"
        )
    return found[0]


class PluginDriver:
    def __init__(
        self, entry: PluginScenario, s: Settings, bus: Clients, engine: AsyncEngine
    ) -> None:
        self.entry, self.settings, self.bus, self.engine = entry, s, bus, engine
        self.routes = Announcements(bus, {entry.workflow_type})

    async def one(self) -> tuple[str, float]:
        sc = self.entry.scenario
        run = PluginRun(
            "bench",
            self.entry.workflow_type,
            "bench",
            self.settings.home.resolve(),
            self.bus,
            self.engine,
            on_start=self.routes.watch,
        )
        started = time.perf_counter()
        run.workflow_id = await run.start(sc.request(run.token))
        if sc.script is not None:
            await sc.script(run)
        await run.wait_state(sc.expected)
        return run.workflow_id, (time.perf_counter() - started) * 1000


async def drive(
    one: Callable[[], Awaitable[tuple[str, float]]], count: int, concurrency: int
) -> tuple[list[str], list[float], int]:
    """`count` workflows by `one`, `concurrency` at a time: their ids, latencies (ms) and
    how many did not finish within two minutes."""
    gate = asyncio.Semaphore(concurrency)
    ids: list[str] = []
    latencies: list[float] = []
    failures = 0

    async def guarded() -> None:
        nonlocal failures
        async with gate:
            try:
                async with asyncio.timeout(120.0):
                    workflow_id, ms = await one()
            except TimeoutError:
                failures += 1
                return
            ids.append(workflow_id)
            latencies.append(ms)

    await asyncio.gather(*(guarded() for _ in range(count)))
    return ids, latencies, failures


async def measure(
    one: Callable[[], Awaitable[tuple[str, float]]],
    pids: dict[str, int],
    *,
    workflows: int,
    concurrency: int,
    warmup: int,
    window: ServerWindow,
) -> dict[str, Any]:
    """`warmup` unmeasured workflows, then `workflows` measured, with the components'
    (`pids`) CPU and memory sampled meanwhile, and the servers' share (`window`)."""
    await drive(one, warmup, concurrency)
    sampler = ResourceSampler(pids)
    await window.open()
    async with sampler.running():
        t0 = time.perf_counter()
        ids, latencies, failures = await drive(one, workflows, concurrency)
        wall = time.perf_counter() - t0
    await window.close()
    return {
        "ids": ids,
        "latencies": latencies,
        "failures": failures,
        "wall": wall,
        "resources": sampler.summary(wall) | window.summary(),
    }


async def run_plugin_bench(
    s: Settings,
    nats_url: str,
    database_url: str,
    entry: PluginScenario,
    *,
    workflows: int,
    concurrency: int,
    warmup: int,
) -> dict[str, Any]:
    """The measured run for `entry`'s type; the caller reports it as the support bench's."""
    stack = stack_of(s, entry.workflow_type)
    async with supervised(s, nats_url, database_url, stack) as supervisor:
        bus = await Clients.connect(s, nats_url, "interlock-bench")
        engine = queries.open_reader(database_url, pool_size=4)
        driver = PluginDriver(entry, s, bus, engine)
        await driver.routes.start()
        try:
            return await measure(
                driver.one,
                supervisor.pids(),
                workflows=workflows,
                concurrency=concurrency,
                warmup=warmup,
                window=ServerWindow(nats_url, database_url, s.projector_partitions),
            )
        finally:
            await driver.routes.stop()
            await engine.dispose()
            await bus.close()
