"""`interlock bench`: happy-path support workflows through the real stack, measured.

Each workflow: publish a request, approve as soon as the approval task appears on
`wf.out.support.approval_requested`, and stop the clock when `wf.out.support.completed`
arrives. The first `warmup` workflows are not counted. Figures are printed, never asserted:
speed targets belong here, not in tests.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from typing import Annotated, Any

import nats
import typer
from nats.aio.msg import Msg

from interlock import queries, terminal
from interlock.composition import default_stack
from interlock.contracts import subjects
from interlock.contracts.envelope import Actor, Envelope, utcnow
from interlock.contracts.errors import ErrorCode, InterlockError
from interlock.contracts.ids import workflow_id_for
from interlock.embedded import broker_sync
from interlock.health import attached
from interlock.options import JsonOpt, load_settings, with_stack
from interlock.runtime import supervised
from interlock.settings import Settings
from interlock.signals import Clients
from interlock.tools.bench_stats import ResourceSampler, hop_latencies
from interlock.tools.console_pages import page_times

APPROVER = Actor(id="bench-approver", role="support_approver")
REQUEST = {
    "subject": "Refund for a double charge",
    "body": "Charged twice this month.",
    "amount": "20.00",
    "currency": "EUR",
}


def bench(
    workflows: Annotated[int, typer.Option(min=1, help="Workflows to measure.")] = 200,
    concurrency: Annotated[int, typer.Option(min=1, help="Workflows in flight.")] = 20,
    warmup: Annotated[int, typer.Option(min=0, help="Unmeasured workflows first.")] = 20,
    console_pages: Annotated[
        bool, typer.Option(help="Also time each operator console page over the results.")
    ] = False,
    json_output: JsonOpt = False,
) -> None:
    """Drive happy-path workflows and print throughput, latency, CPU and memory."""
    s = load_settings()
    try:

        async def measured(s: Settings, nats_url: str, database_url: str) -> dict[str, Any]:
            report = await run_bench(
                s,
                nats_url,
                database_url,
                workflows=workflows,
                concurrency=concurrency,
                warmup=warmup,
            )
            report["broker_sync"] = broker_sync(nats_url, s.home)
            if console_pages:
                ids = report["workflow_ids"]
                newest = ("bench", ids[-1]) if ids else None
                report["console_pages"] = await page_times(s, nats_url, database_url, newest)
            return report

        report = with_stack(measured, s)
    except BenchRefused as exc:
        terminal.errors.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    del report["workflow_ids"]
    if json_output:
        terminal.print_json(report)
    else:
        _print(report)
    if report["failures"]:
        raise typer.Exit(1)


class BenchRefused(InterlockError):
    """The broker already has Interlock components: a benchmark would compete with them."""

    code = ErrorCode.CONFIGURATION
    retryable = False


class Driver:
    """Publishes requests, answers approval tasks, and times completions."""

    def __init__(self, bus: Clients) -> None:
        self.bus = bus
        self.js = bus.approvals.jetstream()
        self.done: dict[str, asyncio.Future[float]] = {}
        self.subs: list[Any] = []

    async def start(self) -> None:
        for name, cb in (("approval_requested", self._approve), ("completed", self._completed)):
            self.subs.append(
                await self.js.subscribe(
                    subjects.out("support", name),
                    cb=cb,
                    ordered_consumer=True,
                    deliver_policy=nats.js.api.DeliverPolicy.NEW,
                )
            )

    async def _approve(self, msg: Msg) -> None:
        task = Envelope.model_validate_json(msg.data)
        if task.workflow_id not in self.done:
            return
        event = Envelope(
            event_id=f"bench-ok-{uuid.uuid4()}",
            type="APPROVED",
            workflow_type="support",
            workflow_id=task.workflow_id,
            tenant_id=task.tenant_id,
            actor=APPROVER,
            occurred_at=utcnow(),
            payload={
                "recommendation_version": task.payload["recommendation_version"],
                "amount": task.payload["amount"],
            },
        )
        await self.bus.approvals.jetstream().publish(
            subjects.signal("support", self.bus.approvals_name),
            event.to_bytes(),
            headers={subjects.HEADER_MSG_ID: event.event_id},
        )

    async def _completed(self, msg: Msg) -> None:
        future = self.done.get(Envelope.model_validate_json(msg.data).workflow_id or "")
        if future is not None and not future.done():
            future.set_result(time.perf_counter())

    async def one(self) -> tuple[str, float]:
        event_id = f"bench-{uuid.uuid4()}"
        workflow_id = workflow_id_for("support", "bench", event_id)
        finished = self.done[workflow_id] = asyncio.get_running_loop().create_future()
        event = Envelope(
            event_id=event_id,
            type="START",
            workflow_type="support",
            tenant_id="bench",
            actor=Actor(id="bench", role="upstream"),
            occurred_at=utcnow(),
            payload={**REQUEST, "customer_id": f"bench-{event_id[-8:]}"},
        )
        started = time.perf_counter()
        await self.bus.upstream.jetstream().publish(
            subjects.request("support", self.bus.upstream_name),
            event.to_bytes(),
            headers={subjects.HEADER_MSG_ID: event_id},
        )
        return workflow_id, (await finished - started) * 1000

    async def many(self, count: int, concurrency: int) -> tuple[list[str], list[float], int]:
        gate = asyncio.Semaphore(concurrency)
        ids: list[str] = []
        latencies: list[float] = []
        failures = 0

        async def guarded() -> None:
            nonlocal failures
            async with gate:
                try:
                    async with asyncio.timeout(120.0):
                        workflow_id, ms = await self.one()
                except TimeoutError:
                    failures += 1
                    return
                ids.append(workflow_id)
                latencies.append(ms)

        await asyncio.gather(*(guarded() for _ in range(count)))
        return ids, latencies, failures


async def run_bench(
    s: Settings, nats_url: str, database_url: str, *, workflows: int, concurrency: int, warmup: int
) -> dict[str, Any]:
    busy, _ = await attached("projector", nats_url)
    if busy:
        raise BenchRefused(
            "Interlock components already consume this broker (e.g. `interlock up` with the "
            "same INTERLOCK_HOME); the benchmark's own components would share their consumers "
            "and the figures would describe neither. Stop them, or point INTERLOCK_NATS_URL "
            "and INTERLOCK_DATABASE_URL at servers no Interlock component uses."
        )
    async with supervised(s, nats_url, database_url, default_stack("support")) as supervisor:
        bus = await Clients.connect(s, nats_url, "interlock-bench")
        driver = Driver(bus)
        await driver.start()
        try:
            await driver.many(warmup, concurrency)
            sampler = ResourceSampler(supervisor.pids())
            async with sampler.running():
                t0 = time.perf_counter()
                ids, latencies, failures = await driver.many(workflows, concurrency)
                wall = time.perf_counter() - t0
        finally:
            await bus.close()
    engine = queries.open_reader(database_url, pool_size=2)
    try:
        transitions = await queries.accepted_transitions(engine, ids)
        hops = await hop_latencies(engine, ids)
    finally:
        await engine.dispose()
    return {"workflow_ids": ids} | _report(
        n=workflows,
        concurrency=concurrency,
        wall=wall,
        latencies=latencies,
        failures=failures,
        transitions=transitions,
        hops=hops,
        resources=sampler.summary(wall),
    )


def _report(
    *,
    n: int,
    concurrency: int,
    wall: float,
    latencies: list[float],
    failures: int,
    transitions: int,
    hops: dict[str, Any],
    resources: dict[str, Any],
) -> dict[str, Any]:
    q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    return {
        "workflows": n,
        "concurrency": concurrency,
        "failures": failures,
        "seconds": round(wall, 3),
        "workflows_per_s": round(len(latencies) / wall, 1) if wall else 0.0,
        "transitions_per_s": round(transitions / wall, 1) if wall else 0.0,
        "p50_ms": round(statistics.median(latencies), 1) if latencies else None,
        "p95_ms": round(q[94], 1) if latencies else None,
        "p99_ms": round(q[98], 1) if latencies else None,
        "hops": hops,
        **resources,
    }


def _print(r: dict[str, Any]) -> None:
    terminal.console.print(
        f"{r['workflows']} workflows at concurrency {r['concurrency']} in {r['seconds']} s: "
        f"[bold]{r['workflows_per_s']} workflows/s[/], {r['transitions_per_s']} transitions/s\n"
        f"end to end: p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms, p99 {r['p99_ms']} ms\n"
        f"per hop (p50/p95 ms): "
        + ", ".join(f"{k} {v['p50_ms']}/{v['p95_ms']}" for k, v in r["hops"].items())
        + "\n"
        f"CPU {r['cpu_seconds']} s ({r['cpu_percent']}% of one core), "
        f"peak RSS {r['peak_rss_mb']} MB; failures {r['failures']}\n"
        f"broker sync: {r['broker_sync']}"
    )
    for page, t in r.get("console_pages", {}).items():
        terminal.console.print(f"console {page}: p50 {t['p50_ms']} ms, max {t['max_ms']} ms")
