"""`interlock bench` as a user runs it: its own component processes on the given servers, a
JSON report with the documented keys, and a refusal (not a skewed figure) when other
Interlock components already consume the broker."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nats
import pytest

from interlock.app.bootstrap import prepare
from interlock.config import access
from interlock.contracts import subjects
from tests.support.cli import cli_env, cli_streams
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(240)


async def _bench(
    home: Path,
    nats_url: str,
    database_url: str,
    *args: str,
    stage_host: str = "on",
) -> tuple[int, str, str]:
    # The server alone: the bench connects as the installation's clients, administers as admin.
    server = access.without_credentials(nats_url)
    env = cli_env(
        home,
        INTERLOCK_NATS_URL=server,
        INTERLOCK_DATABASE_URL=database_url,
        INTERLOCK_STAGE_HOST=stage_host,
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "interlock",
        "bench",
        *args,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 180)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


Report = Callable[..., Awaitable[dict[str, Any]]]


@pytest.fixture
def bench_report(tmp_path: Path, module_nats: str, module_database: str) -> Report:
    """Run the bench with these arguments and `--json`; its report, once it succeeded."""

    async def report(*args: str) -> dict[str, Any]:
        code, out, err = await _bench(tmp_path, module_nats, module_database, *args, "--json")
        assert code == 0, err
        found: dict[str, Any] = json.loads(out)
        return found

    return report


async def test_bench_reports_the_documented_figures(bench_report: Report) -> None:
    report = await bench_report(
        *("--workflows", "6", "--concurrency", "3", "--warmup", "1", "--console-pages")
    )

    assert report["workflows"] == 6
    assert report["failures"] == 0
    assert report["workflows_per_s"] > 0
    # Every happy-path support workflow takes the same transitions, at least one per stage.
    per_workflow = report["transitions_per_s"] / report["workflows_per_s"]
    assert per_workflow >= 8
    assert 0 < report["p50_ms"] <= report["p95_ms"] <= report["p99_ms"]
    assert {"decide_commit", "dispatch_work"} <= set(report["hops"])
    pages = report["console_pages"]
    assert {"/", "/tasks", "/operations"} <= set(pages)
    assert any(page.startswith("/workflows/bench/") for page in pages)
    assert all(0 < t["p50_ms"] <= t["max_ms"] for t in pages.values())
    assert report["cpu_by_component"]["projector"] > 0
    # INTERLOCK_STAGE_HOST=on: every stage service in the one process of the stage host
    assert report["stage_host"] is True
    assert report["cpu_by_component"]["stages"] > 0
    assert not [name for name in report["cpu_by_component"] if "." in name]
    assert report["cpu_ms_per_workflow"] > 0
    # The session's servers are local: their CPU is counted beside Interlock's own.
    by = report["cpu_ms_per_workflow_by"]
    assert set(by) == {"interlock", "nats", "postgres"}
    assert all(ms > 0 for ms in by.values()), by
    assert by["interlock"] == report["cpu_ms_per_workflow"]
    assert report["cpu_ms_per_workflow_all"] == pytest.approx(sum(by.values()), abs=0.05)
    # One partition decides every workflow. It is delivered what went through the inbound
    # stream (each request and approval at least); the stages' results it was asked for.
    [partition] = report["partitions"]
    assert partition["partition"] == 0
    assert partition["decided"] >= 8 * report["workflows"]
    assert 2 * report["workflows"] <= partition["delivered"] < partition["decided"]
    # The inbound stream stores the requests and approvals, and removes what it delivered.
    js = report["jetstream_per_workflow"]
    inbound = js["by_stream"][subjects.STREAM_IN]
    assert inbound["stored"] >= 2
    assert inbound["removed"] > 0
    assert js["stored"] >= inbound["stored"] + 7  # and the jobs the stages were sent
    assert report["tracing"] == {"sampler": "parentbased_always_on", "ratio": 1.0}
    assert report["work"] == "realistic"
    assert "sim" in report["cpu_by_component"]
    assert report["peak_rss_mb"] > 0
    sync = report["broker_sync"]  # "always", a flush interval such as "120s", or "unknown"
    assert sync in ("always", "unknown") or sync.endswith("s")


async def test_bench_of_a_plugin_type_runs_its_happy_path_scenario(
    tmp_path: Path, module_nats: str, module_database: str
) -> None:
    pytest.importorskip("interlock_invoice")
    code, out, err = await _bench(
        tmp_path,
        module_nats,
        module_database,
        *("--type", "invoice", "--workflows", "4", "--concurrency", "2", "--warmup", "1"),
        "--json",
        stage_host="off",
    )

    assert code == 0, err
    report = json.loads(out)
    assert (report["workflows"], report["failures"]) == (4, 0)
    # receive, extract, validate, post, notify: five accepted transitions per invoice
    assert round(report["transitions_per_s"] / report["workflows_per_s"]) == 5
    # INTERLOCK_STAGE_HOST=off: a process, and a line of the breakdown, per stage service
    assert report["stage_host"] is False
    assert {"invoice.extract", "invoice.post"} <= set(report["cpu_by_component"])


async def test_bench_of_a_type_without_that_scenario_is_refused(
    tmp_path: Path, module_nats: str, module_database: str
) -> None:
    pytest.importorskip("interlock_invoice")
    code, out, err = await _bench(
        tmp_path, module_nats, module_database, "--type", "invoice", "--scenario", "nope"
    )

    assert (code, out) == (2, "")
    assert "ships no scenario 'nope'" in " ".join(err.split())


async def test_bench_of_a_plugin_type_without_stage_work_is_refused(
    tmp_path: Path, module_nats: str, module_database: str
) -> None:
    """`--work none` answers support's ports in process; a plugin type runs its own stages."""
    pytest.importorskip("interlock_invoice")
    code, out, err = await _bench(
        tmp_path, module_nats, module_database, "--type", "invoice", "--work", "none"
    )

    assert (code, out) == (2, "")
    assert "--work none" in " ".join(err.split())


async def test_bench_without_stage_work_runs_no_simulator(bench_report: Report) -> None:
    report = await bench_report(
        *("--workflows", "4", "--concurrency", "2", "--warmup", "1", "--work", "none")
    )

    assert (report["work"], report["failures"]) == ("none", 0)
    # The stages answered in process: every workflow completed, and no simulator ran.
    assert report["workflows_per_s"] > 0
    assert "sim" not in report["cpu_by_component"]
    assert report["cpu_ms_per_workflow"] > 0


async def test_bench_refuses_to_run_beside_other_components(
    tmp_path: Path, module_nats: str, module_database: str
) -> None:
    await prepare(module_nats, module_database)
    nc = await nats.connect(module_nats)
    js = nc.jetstream()
    # Someone else's projector: a pull request waiting on the projector's durable consumer.
    squatter = await js.pull_subscribe_bind(subjects.CONSUMER_PROJECTOR, subjects.STREAM_IN)
    waiting = asyncio.ensure_future(squatter.fetch(1, timeout=60))

    async def fetching() -> bool:
        info = await js.consumer_info(subjects.STREAM_IN, subjects.CONSUMER_PROJECTOR)
        return bool(info.num_waiting)

    try:
        await eventually(fetching, what="the other projector's pull request")
        code, out, err = await _bench(tmp_path, module_nats, module_database, "--json")
    finally:
        waiting.cancel()
        await nc.close()

    assert code == 2
    assert out == ""
    assert "already consume this broker" in " ".join(err.split())


async def test_a_partition_series_alternates_the_counts_and_gives_their_medians(
    tmp_path: Path,
) -> None:
    """Each run on a fresh embedded stack of its own (the environment names no servers); the
    two partitions in one process, the partition host, each still reading only its own."""
    env = {**cli_env(tmp_path), "INTERLOCK_PROJECTOR_HOST": "on"}
    code, out, err = await cli_streams(
        env,
        "bench",
        *("--work", "none", "--workflows", "4", "--warmup", "0", "--concurrency", "2"),
        *("--partitions", "1,2", "--rounds", "1", "--json"),
        within=220,
    )
    assert code == 0, err
    result = json.loads(out)
    assert [(r["round"], r["partitions"]) for r in result["runs"]] == [(1, 1), (1, 2)]
    for run in result["runs"]:
        shares = run["report"]["partitions"]
        assert len(shares) == run["partitions"]
        assert run["report"]["projector_host"] is (run["partitions"] > 1)
        # Each partition is delivered only messages it decides (no other partition's); with
        # four workflows a partition may own none (one run in eight), and then reads nothing.
        assert all(p["delivered"] <= p["decided"] for p in shares)
        assert all((p["delivered"] > 0) == (p["decided"] > 0) for p in shares)
        assert sum(p["delivered"] for p in shares) > 0
    rows = {row["partitions"]: row for row in result["summary"]}
    assert set(rows) == {1, 2}
    assert rows[1]["cpu_vs_first"] == 1.0
    assert rows[2]["cpu_vs_first"] > 0
    assert "round 1/1, 2 partition(s)" in err


async def test_a_partition_series_on_servers_of_ones_own_is_refused(
    tmp_path: Path, module_nats: str, module_database: str
) -> None:
    code, _, err = await _bench(
        tmp_path, module_nats, module_database, "--partitions", "1,2", "--json"
    )
    assert code == 2
    assert "fresh embedded stack" in err
