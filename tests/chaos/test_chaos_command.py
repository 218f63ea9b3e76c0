"""`interlock chaos`, as CI runs it: a short, fixed-seed run on its own embedded broker and
database, which must break no invariant and report exactly the documented shape."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from tests.support.cli import cli_env

pytestmark = pytest.mark.timeout(900)
KEYS = {
    "workflows",
    "seed",
    "faults",
    "lost",
    "duplicate_effects",
    "unauthorized_effects",
    "audit_gaps",
    "stuck",
    "dlq_good",
    "recovery_p95_s",
    "ok",
}
VIOLATIONS = ("lost", "duplicate_effects", "unauthorized_effects", "audit_gaps", "stuck")


async def test_a_short_chaos_run_loses_doubles_and_strands_nothing(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "interlock", "chaos", "--workflows", "100", "--duration", "90"),
        *("--seed", "7", "--json"),
        env=cli_env(tmp_path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()

    assert process.returncode == 0, err.decode()[-3000:]
    report = json.loads(out)
    assert set(report) == KEYS
    assert (report["workflows"], report["seed"], report["ok"]) == (100, 7, True)
    assert all(report[key] == 0 for key in (*VIOLATIONS, "dlq_good"))
    faults = report["faults"]
    assert all(faults[kind] > 0 for kind in ("projector", "relay", "timer", "sim", "stage"))
    assert faults["nats_restarts"] >= 1
    assert faults["postgres_restarts"] >= 1
    assert report["recovery_p95_s"] is None or report["recovery_p95_s"] <= 5.0
