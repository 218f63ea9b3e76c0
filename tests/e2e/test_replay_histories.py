"""Replay as a deploy gate, over the histories a demo run leaves behind (real components, real
NATS and PostgreSQL): the installed definitions re-decide every recorded event exactly, and a
definition whose guard was changed is caught, naming the workflows it would have decided
differently, with exit 1."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from interlock.cli import app, history
from interlock.contracts.registry import Registry
from interlock.definition import Guard, WorkflowDefinition
from interlock.projector.store.histories import read_histories
from interlock.tools.demo import ScenarioResult
from tests.e2e.conftest import DemoRun
from tests.support.cli import cli_env

pytestmark = pytest.mark.timeout(300)
STRICT = 0.99


@pytest.fixture(scope="module")
def demo_run(every_scenario: DemoRun) -> list[ScenarioResult]:
    """The demo's run of every scenario (tests/e2e/conftest.py): its histories, in a database
    nothing else writes to."""
    return every_scenario.outcomes


def _replay(home: Path, database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "interlock", "replay", *args],
        env=cli_env(home, INTERLOCK_DATABASE_URL=database_url),
        text=True,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_the_demos_histories_replay_without_divergence(
    demo_run: list[ScenarioResult], every_scenario: DemoRun
) -> None:
    done = _replay(every_scenario.settings.home, every_scenario.database_url, "--json")

    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["divergences"] == []
    assert report["workflows"] == len(demo_run)
    assert report["incomplete"] == 0
    assert report["events"] >= 5 * len(demo_run)


def test_the_replays_options_choose_the_workflows(
    demo_run: list[ScenarioResult], every_scenario: DemoRun
) -> None:
    home, database_url = every_scenario.settings.home, every_scenario.database_url
    limited = _replay(home, database_url, "--json", "--limit", "2")
    later = _replay(home, database_url, "--json", "--since", "2999-01-01")
    bad = _replay(home, database_url, "--since", "yesterday-ish")
    other = _replay(home, database_url, "--type", "nonesuch")

    assert json.loads(limited.stdout)["workflows"] == 2
    assert json.loads(later.stdout) == {
        "workflows": 0,
        "events": 0,
        "divergences": [],
        "incomplete": 0,
    }
    assert (bad.returncode, other.returncode) == (2, 2)


def _stricter(d: WorkflowDefinition) -> WorkflowDefinition:
    """`d` with its classification confidence gate tightened to `STRICT`."""
    strict = Guard(name="confidence_at_least", params={"param": "strict_confidence"})
    rows = tuple(
        row.model_copy(update={"guards": (strict,)})
        if any(g.name == "confidence_at_least" for g in row.guards)
        else row
        for row in d.transitions
    )
    parameters = {**d.parameters, "strict_confidence": STRICT}
    return d.model_copy(update={"transitions": rows, "parameters": parameters})


def _classified_below_strict(database_url: str) -> set[str]:
    """The workflows whose accepted classification had a confidence the old gate let through
    and the stricter one would not."""
    histories = asyncio.run(read_histories(database_url))
    return {
        h.workflow_id
        for history in histories
        for h in history
        if h.accepted
        and h.event["type"] == "CLASSIFICATION_SUCCEEDED"
        and 0.75 <= float(h.event["payload"]["confidence"]) < STRICT
    }


def test_a_changed_guard_is_reported_per_workflow_and_fails_the_gate(
    demo_run: list[ScenarioResult],
    every_scenario: DemoRun,
    demo_environment: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module_database = every_scenario.database_url
    installed = history.installed_registry()
    stricter = Registry(
        (_stricter(d) if d.workflow_type == "support" else d for d in installed),
        {t: installed.guards(t) for t in installed.workflow_types()},
    )
    monkeypatch.setattr(history, "installed_registry", lambda: stricter)
    monkeypatch.setenv("INTERLOCK_DATABASE_URL", module_database)
    monkeypatch.setenv("INTERLOCK_HOME", str(every_scenario.settings.home))
    expected = _classified_below_strict(module_database)

    done = CliRunner().invoke(app, ["replay", "--json"])

    assert done.exit_code == 1, done.output
    report: dict[str, Any] = json.loads(done.stdout)
    diverged = {d["workflow_id"] for d in report["divergences"]}
    assert expected
    assert diverged == expected
    assert len(expected) < report["workflows"]  # the low-confidence ones decided alike
    states = [d for d in report["divergences"] if d["field"] == "state"]
    assert {d["replayed"] for d in states} == {"MANUAL_REVIEW"}
    assert {d["workflow_id"] for d in states} == expected
