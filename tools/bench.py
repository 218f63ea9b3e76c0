"""`interlock bench`: happy-path support workflows through the real stack, measured (with
`--type`, another type's own workload: `bench_plugin`).

Each workflow: publish a request, approve as soon as the approval task appears on
`wf.out.support.approval_requested`, and stop the clock when `wf.out.support.completed`
arrives. The first `warmup` workflows are not counted. Figures are printed, never asserted:
speed targets belong here, not in tests.
"""

from __future__ import annotations

import statistics
from enum import StrEnum
from typing import Annotated, Any

import typer

from interlock.app import terminal
from interlock.app.bootstrap import supervised
from interlock.app.composition import stack_of
from interlock.app.embedded import broker_sync
from interlock.app.health import attached
from interlock.app.options import JsonOpt, load_settings, with_stack
from interlock.config.components import SIMULATOR
from interlock.config.settings import Settings
from interlock.ops import queries
from interlock.ops.signals import Clients
from interlock.tools.bench_driver import Driver
from interlock.tools.bench_plugin import measure, run_plugin_bench, workload
from interlock.tools.bench_series import series
from interlock.tools.bench_servers import ServerWindow, partition_shares, per_workflow, sampling
from interlock.tools.bench_stats import DRIVER, hop_latencies
from interlock.tools.console_pages import page_times
from interlock.tools.demo.plugins import PluginScenario
from interlock.tools.errors import BenchRefused, NoWorkload

INSTANT_PORTS = ("accounts", "policies", "actions", "notifier")
"""The support ports `--work none` answers in process (the model is the in-process `rules`)."""


class Work(StrEnum):
    REALISTIC = "realistic"
    NONE = "none"


def bench(
    *,
    workflows: Annotated[int, typer.Option(min=1, help="Workflows to measure.")] = 200,
    concurrency: Annotated[int, typer.Option(min=1, help="Workflows in flight.")] = 20,
    warmup: Annotated[int, typer.Option(min=0, help="Unmeasured workflows first.")] = 20,
    workflow_type: Annotated[
        str, typer.Option("--type", help="The workflow type (another: its plugin's scenario).")
    ] = "support",
    scenario: Annotated[
        str, typer.Option(help="Of a plugin's scenarios, the one to run (`--type` not support).")
    ] = "happy_path",
    work: Annotated[
        Work,
        typer.Option(
            help="What the stages do: `realistic` calls the simulated outside systems (a "
            "simulator process, over NATS, on its ledger); `none` answers them in process at "
            "once and starts no simulator, so only orchestration is measured (as the peers' "
            "empty steps are)."
        ),
    ] = Work.REALISTIC,
    console_pages: Annotated[
        bool, typer.Option(help="Also time each operator console page over the results.")
    ] = False,
    partitions: Annotated[
        str | None,
        typer.Option(
            help="Run the bench at each of these projector partition counts (e.g. 1,2,4), "
            "alternating them --rounds times, each on a fresh embedded stack, and print the "
            "medians side by side: the scaling test."
        ),
    ] = None,
    rounds: Annotated[int, typer.Option(min=1, help="Rounds of a --partitions series.")] = 3,
    json_output: JsonOpt = False,
) -> None:
    """Drive happy-path support workflows and print throughput, latency (p50/p95/p99), CPU
    per workflow across every Interlock process, peak RSS, and the broker's sync setting."""
    s = load_settings()
    if partitions is not None:
        arguments = [
            f"--workflows={workflows}",
            f"--concurrency={concurrency}",
            f"--warmup={warmup}",
            f"--type={workflow_type}",
            f"--scenario={scenario}",
            f"--work={work.value}",
        ]
        series(partitions, rounds, arguments, s, json_output=json_output)
        return
    hosted = s.hosts_stages()
    components = stack_of(s, "support")
    if work is Work.NONE:
        instant = {port: {"adapter": "instant"} for port in INSTANT_PORTS}
        adapters = {**s.adapters, "support": {**s.adapters.get("support", {}), **instant}}
        s = s.model_copy(update={"adapters": adapters})
        components = [name for name in components if name != SIMULATOR]  # answered in process
    try:
        entry = None if workflow_type == "support" else workload(workflow_type, scenario)
        if entry is not None and work is Work.NONE:
            raise BenchRefused(
                "--work none answers the support workflow's ports in process; another type "
                "runs its plugin's own stages (leave --work at realistic)"
            )

        async def measured(s: Settings, nats_url: str, database_url: str) -> dict[str, Any]:
            report = await run_bench(
                s,
                nats_url,
                database_url,
                components,
                workflows=workflows,
                concurrency=concurrency,
                warmup=warmup,
                entry=entry,
            )
            report["work"] = work.value
            report["projector_partitions"] = s.projector_partitions
            report["broker_sync"] = broker_sync(nats_url, s.home)
            report["stage_host"] = hosted
            report["projector_host"] = s.hosts_partitions()
            if console_pages:
                ids = report["workflow_ids"]
                newest = ("bench", ids[-1]) if ids else None
                report["console_pages"] = await page_times(s, nats_url, database_url, newest)
            return report

        report = with_stack(measured, s)
    except (BenchRefused, NoWorkload) as exc:
        terminal.errors.print(f"[red]{exc}[/]")
        raise typer.Exit(2) from None
    del report["workflow_ids"]
    if json_output:
        terminal.print_json(report)
    else:
        _print(report)
    if report["failures"]:
        raise typer.Exit(1)


async def run_bench(
    s: Settings,
    nats_url: str,
    database_url: str,
    components: list[str],
    *,
    workflows: int,
    concurrency: int,
    warmup: int,
    entry: PluginScenario | None = None,
) -> dict[str, Any]:
    """Support's happy path, or with `entry` that plugin scenario, measured."""
    busy, _ = await attached("projector", nats_url)
    if busy:
        raise BenchRefused(
            "Interlock components already consume this broker (e.g. `interlock up` with the "
            "same INTERLOCK_HOME); the benchmark's own components would share their consumers "
            "and the figures would describe neither. Stop them, or point INTERLOCK_NATS_URL "
            "and INTERLOCK_DATABASE_URL at servers no Interlock component uses."
        )
    if entry is not None:
        run = await run_plugin_bench(
            s,
            nats_url,
            database_url,
            entry,
            workflows=workflows,
            concurrency=concurrency,
            warmup=warmup,
        )
        return await _measured(database_url, workflows, concurrency, **run)
    async with supervised(s, nats_url, database_url, components) as supervisor:
        bus = await Clients.connect(s, nats_url, "interlock-bench")
        driver = Driver(bus)
        await driver.start()
        try:
            run = await measure(
                driver.one,
                supervisor.pids(),
                workflows=workflows,
                concurrency=concurrency,
                warmup=warmup,
                window=ServerWindow(nats_url, database_url, s.projector_partitions),
            )
        finally:
            await bus.close()
    return await _measured(database_url, workflows, concurrency, **run)


async def _measured(
    database_url: str,
    n: int,
    concurrency: int,
    *,
    ids: list[str],
    latencies: list[float],
    failures: int,
    wall: float,
    resources: dict[str, Any],
) -> dict[str, Any]:
    engine = queries.open_reader(database_url, pool_size=2)
    try:
        transitions = await queries.accepted_transitions(engine, ids)
        hops = await hop_latencies(engine, ids)
        decisions = await queries.decisions_per_workflow(engine, ids)
    finally:
        await engine.dispose()
    resources = resources | {"partitions": partition_shares(resources, decisions)}
    return {"workflow_ids": ids} | _report(
        n=n,
        concurrency=concurrency,
        wall=wall,
        latencies=latencies,
        failures=failures,
        transitions=transitions,
        hops=hops,
        resources=resources,
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
    done = len(latencies)
    stack_cpu = sum(v for k, v in resources["cpu_by_component"].items() if k != DRIVER)
    by = {"interlock": stack_cpu, **resources["cpu_by_server"]}
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
        # Every Interlock process, without the driver (the peers' clients are not counted
        # either), per workflow measured: the figure a CPU budget is stated in.
        "cpu_ms_per_workflow": round(1000 * stack_cpu / done, 2) if done else None,
        # The same with the broker's and the database's processes (None where a server is
        # not on this machine): what the workflows cost the machine.
        "cpu_ms_per_workflow_by": {
            kind: round(1000 * cpu / done, 2) if done and cpu is not None else None
            for kind, cpu in by.items()
        },
        "cpu_ms_per_workflow_all": (
            round(1000 * sum(by.values()) / done, 2) if done and None not in by.values() else None
        ),
        "jetstream_per_workflow": per_workflow(resources.get("stream_writes", {}), done),
        "tracing": sampling(),
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
        f"{r['cpu_ms_per_workflow']} ms per workflow over {r['processes']} processes, "
        f"peak RSS {r['peak_rss_mb']} MB; failures {r['failures']}\n"
        f"CPU per workflow with the servers: {r['cpu_ms_per_workflow_all']} ms "
        f"({', '.join(f'{k} {v}' for k, v in r['cpu_ms_per_workflow_by'].items())})\n"
        f"JetStream writes per workflow: {r['jetstream_per_workflow']['stored']} stored "
        f"(each fsynced), {r['jetstream_per_workflow']['removed']} removed; "
        f"traces sampled: {r['tracing']['ratio']}\n"
        f"per partition (delivered/decided): "
        + ", ".join(f"{p['partition']}: {p['delivered']}/{p['decided']}" for p in r["partitions"])
        + "\n"
        f"stage work: {r['work']}; projector partitions: {r['projector_partitions']}"
        f"{' in one process' if r['projector_host'] else ''}; "
        f"broker sync: {r['broker_sync']}; "
        f"stage services {'in one process' if r['stage_host'] else 'one process each'}"
    )
    for page, t in r.get("console_pages", {}).items():
        terminal.console.print(f"console {page}: p50 {t['p50_ms']} ms, max {t['max_ms']} ms")
