"""The invoice plugin's demo scenarios (`Plugin.scenarios`, run by `interlock demo` beside the
support ones) through the whole stack: components as real processes (the invoice stages each
their own), real NATS and PostgreSQL, the finance simulator's shared ledger. One run per
module; each test reads its results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from interlock.config.settings import Settings
from interlock.tools.demo import ScenarioResult, run_demo
from interlock.tools.demo.plugins import plugin_scenarios
from tests.support.cli import cli, cli_env
from tests.support.workflow_rows import workflow_views

pytest.importorskip("interlock_invoice")
from interlock_invoice.scenarios import SCENARIOS
from interlock_invoice.simulator import Ledger, ledger_path

pytestmark = pytest.mark.timeout(300)
NAMES = [f"invoice.{s.name}" for s in SCENARIOS]


@pytest.fixture(scope="module")
async def results(
    e2e_settings: Settings, module_nats: str, module_database: str
) -> dict[str, tuple[ScenarioResult, dict[str, Any]]]:
    outcomes = await run_demo(
        e2e_settings,
        module_nats,
        module_database,
        [],
        quiet=True,
        plugins=plugin_scenarios(["invoice"]),
    )
    views = await workflow_views(module_database, [o.workflow_id for o in outcomes])
    return {o.name: (o, views[o.workflow_id] or {}) for o in outcomes}


def test_the_demo_finds_every_invoice_scenario() -> None:
    assert [s.name for s in plugin_scenarios(["invoice"])] == NAMES
    assert len(NAMES) == 14
    assert [s.name for s in plugin_scenarios(["invoice.happy_path"])] == ["invoice.happy_path"]


@pytest.mark.parametrize("name", NAMES)
def test_scenario_reaches_its_expected_outcome(
    results: dict[str, tuple[ScenarioResult, dict[str, Any]]], name: str
) -> None:
    outcome, view = results[name]
    assert (outcome.actual, outcome.failed_checks) == (outcome.expected, [])
    assert outcome.ok
    assert view["state"] == outcome.expected


async def test_every_posted_invoice_was_posted_once_in_the_shared_ledger(
    results: dict[str, tuple[ScenarioResult, dict[str, Any]]], e2e_settings: Settings
) -> None:
    ledger = Ledger(ledger_path(e2e_settings.home.resolve()), ())
    posted = [o for o, view in results.values() if "posting_number" in view["data"]]
    assert len(posted) >= 6  # the check is not vacuous
    for outcome in posted:
        assert await ledger.count("postings", outcome.workflow_id) == 1, outcome.name


async def test_interlock_demo_only_runs_and_reports_invoice_scenarios(tmp_path: Path) -> None:
    """The command itself: `interlock demo --only <scenario> --json` starts its own stack and
    reports the invoice scenario OK in its JSON."""
    chosen = ["invoice.happy_path", "invoice.posting_response_lost"]
    args = [a for name in chosen for a in ("--only", name)]
    code, out = await cli(cli_env(tmp_path / "home"), "demo", *args, "--json", within=240)

    assert code == 0, out
    scenarios = {s["name"]: s for s in json.loads(out)["scenarios"]}
    assert sorted(scenarios) == sorted(chosen)
    assert all(s["ok"] and s["actual"] == "POSTED" for s in scenarios.values())
