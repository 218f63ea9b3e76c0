"""`interlock bench --partitions 1,2,4 [--rounds R]`: the same bench at several projector
partition counts, alternating them round after round, and the medians side by side.

Each run is a bench of its own (`interlock bench --json` in a child process, with
`INTERLOCK_PROJECTOR_PARTITIONS` set), on a fresh embedded stack (its own home and secrets).
Servers of one's own are refused: a broker's configuration grants the projector the consumers
of one count, so each count needs its own (`interlock nats-config`). Counts alternate within
a round, so a machine that slows down or speeds up over the series weighs on every count
alike; the summary gives the medians and each count's Interlock CPU per workflow against the
first count's, as a median of the ratios within a round. On a machine with cores to spare
(at least 2 + n), this is the scaling test: throughput should grow with n while CPU per
workflow stays flat.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import typer

from interlock.app import terminal
from interlock.config.settings import Settings
from interlock.tools.errors import BenchRefused

FIGURES = ("workflows_per_s", "p50_ms", "cpu_ms_per_workflow", "cpu_ms_per_workflow_all")
"""What the summary gives the median of, per count."""
RUN_TIMEOUT_S = 1800.0


def counts_of(text: str) -> list[int]:
    """`1,2,4` as counts; `BenchRefused` (one line) for anything else."""
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        counts = []
    if not counts or any(not 1 <= n <= 64 for n in counts) or len(set(counts)) < len(counts):
        raise BenchRefused(f"--partitions takes distinct counts 1..64, comma-separated: {text!r}")
    return counts


def run_series(
    counts: Sequence[int],
    rounds: int,
    arguments: list[str],
    *,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """Run the bench `rounds` times at each of `counts` (with the bench's own `arguments`),
    alternating; every run's report and the summary."""
    runs: list[dict[str, Any]] = []
    for round_no in range(1, rounds + 1):
        for n in counts:
            report = _one(n, arguments)
            runs.append({"round": round_no, "partitions": n, "report": report})
            progress(
                f"round {round_no}/{rounds}, {n} partition(s): {report['workflows_per_s']} "
                f"wf/s, p50 {report['p50_ms']} ms, Interlock CPU "
                f"{report['cpu_ms_per_workflow']} ms per workflow, failures {report['failures']}"
            )
    return {"rounds": rounds, "runs": runs, "summary": summary(counts, runs)}


def summary(counts: Sequence[int], runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per count: the median of each figure over the rounds, and the Interlock CPU per
    workflow against the first count's (the median of the per-round ratios)."""
    by_round = {(r["round"], r["partitions"]): r["report"] for r in runs}
    rows = []
    for n in counts:
        mine = [r["report"] for r in runs if r["partitions"] == n]
        row: dict[str, Any] = {"partitions": n, "runs": len(mine)}
        for figure in FIGURES:
            values = [r[figure] for r in mine if r.get(figure) is not None]
            row[figure] = round(statistics.median(values), 2) if values else None
        ratios = [
            by_round[(rnd, n)]["cpu_ms_per_workflow"] / first["cpu_ms_per_workflow"]
            for (rnd, m), first in by_round.items()
            if m == counts[0] and (rnd, n) in by_round and first["cpu_ms_per_workflow"]
        ]
        row["cpu_vs_first"] = round(statistics.median(ratios), 3) if ratios else None
        row["failures"] = sum(r["failures"] for r in mine)
        rows.append(row)
    return rows


def _one(n: int, arguments: list[str]) -> dict[str, Any]:
    env = {**os.environ, "INTERLOCK_PROJECTOR_PARTITIONS": str(n)}
    with tempfile.TemporaryDirectory(prefix="interlock-bench-") as home:
        env["INTERLOCK_HOME"] = home  # a fresh embedded stack, its own secrets included
        env.pop("INTERLOCK_SECRETS_DIR", None)
        done = _interlock(["bench", *arguments, "--json"], env, home)
    if done.returncode not in (0, 1):  # 1: it ran, with failures the report counts
        raise BenchRefused(f"the bench at {n} partition(s) failed: {_last_words(done)}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _interlock(
    arguments: list[str], env: dict[str, str], cwd: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "interlock", *arguments],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def _last_words(done: subprocess.CompletedProcess[str]) -> str:
    return (done.stderr.strip().splitlines() or ["(nothing printed)"])[-1]


def print_summary(result: dict[str, Any], out: Callable[[str], None]) -> None:
    out(f"{result['rounds']} round(s), counts alternating; medians:")
    out("partitions | wf/s | p50 ms | Interlock CPU ms/wf | vs first | all three ms/wf | failures")
    for row in result["summary"]:
        ratio = row["cpu_vs_first"]
        out(
            f"{row['partitions']} | {row['workflows_per_s']} | {row['p50_ms']} | "
            f"{row['cpu_ms_per_workflow']} | "
            f"{'' if ratio is None else f'{100 * (ratio - 1):+.0f} %'} | "
            f"{row['cpu_ms_per_workflow_all']} | {row['failures']}"
        )


def series(
    partitions: str, rounds: int, arguments: list[str], s: Settings, *, json_output: bool
) -> None:
    """The command: run the series, print it (or its JSON); exit 2 for bad counts or a run
    that could not run, 1 if any workflow failed."""
    try:
        if s.nats_url is not None or s.database_url is not None:
            raise BenchRefused(
                "--partitions runs every count on a fresh embedded stack: unset "
                "INTERLOCK_NATS_URL and INTERLOCK_DATABASE_URL (a broker of your own grants the "
                "consumers of one count; render its configuration for each, `interlock "
                "nats-config`, and run the bench at each count)"
            )
        result = run_series(
            counts_of(partitions),
            rounds,
            arguments,
            progress=lambda line: terminal.errors.print(line, highlight=False, soft_wrap=True),
        )
    except BenchRefused as exc:
        terminal.errors.print(f"[red]{exc}[/]", soft_wrap=True, highlight=False)
        raise typer.Exit(2) from None
    if json_output:
        terminal.print_json(result)
    else:
        print_summary(result, lambda line: terminal.console.print(line, highlight=False))
    if any(row["failures"] for row in result["summary"]):
        raise typer.Exit(1)
