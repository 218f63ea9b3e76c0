"""`interlock demo` attached to a running `interlock up` with other timings runs only the
scenarios that do not depend on them, and names the ones it skipped and why."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from interlock.app.endpoints import write_endpoints
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.tools.demo import casefile, demo_environment, scenarios_for
from interlock.tools.demo.casefile import SHIPPED
from interlock.tools.demo.plugins import plugin_scenarios
from interlock.tools.demo.scenarios import SCENARIOS
from interlock.tools.demo.timings import attached_cases, cases_missing, running_timings

DEMO_TIMINGS = {
    "parameters": {"support": {"approval_sla_seconds": 6, "retry_delay_scale": 0.02}},
    "external_timeout": 0.5,
}
PRODUCTION = {"parameters": {}, "external_timeout": 2.0}


def test_same_timings_run_everything() -> None:
    run, skipped, why = scenarios_for(list(SCENARIOS), DEMO_TIMINGS, DEMO_TIMINGS)
    assert (run, skipped, why) == (list(SCENARIOS), [], "")


def test_other_timings_skip_the_timed_scenarios_and_say_why() -> None:
    run, skipped, why = scenarios_for(list(SCENARIOS), DEMO_TIMINGS, PRODUCTION)
    names = {sc.name for sc in skipped}
    assert {"approval_expiry", "account_timeout_then_success", "retry_exhaustion"} <= names
    assert {"happy_path", "policy_invalid", "reviewer_rejects"} <= {sc.name for sc in run}
    assert not names & {sc.name for sc in run}
    assert "INTERLOCK_PARAMETERS" in why
    assert json.dumps(DEMO_TIMINGS["parameters"]) in why


def test_unknown_timings_count_as_other_timings() -> None:
    _, skipped, why = scenarios_for(list(SCENARIOS), DEMO_TIMINGS, None)
    assert skipped
    assert why


def test_other_timings_skip_every_plugin_scenario() -> None:
    """A plugin's scenarios run with the parameters their plugin asks of the demo."""
    theirs = plugin_scenarios()
    assert theirs, "the invoice example plugin is installed in the test environment"
    run, skipped, why = scenarios_for(theirs, DEMO_TIMINGS, PRODUCTION)
    assert (run, skipped) == ([], theirs)
    assert why


# --- an `interlock up` started with exactly what the demo suggests ------------------------


def _demo_settings(home: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The settings `interlock demo` runs with: its timings, then its request cases'."""
    for key in (*demo_environment(), "INTERLOCK_MODELS"):
        monkeypatch.delenv(key, raising=False)
    for key, value in demo_environment().items():
        monkeypatch.setenv(key, value)
    for key, value in casefile.environment(SHIPPED, casefile.load(SHIPPED), os.environ).items():
        monkeypatch.setenv(key, value)
    return Settings(home=home)


def _suggested(why: str) -> dict[str, str]:
    """The `KEY='VALUE'` settings the demo's skip message tells the user to start `up` with."""
    words = shlex.split(why.split("start it with ", 1)[1])
    return dict(word.split("=", 1) for word in words)


def _up_endpoints(home: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """What an `up` started with exactly `env` writes to its endpoints file; the settings of
    a process reading that home."""
    for key in (*demo_environment(), "INTERLOCK_MODELS"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    up = Settings(home=home)
    write_endpoints(up, "nats://127.0.0.1:4222", "postgresql://u@127.0.0.1:5432/db", ["projector"])
    return up


def test_an_up_started_as_suggested_counts_as_having_the_demos_timings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = _demo_settings(tmp_path / "demo", monkeypatch)
    _, skipped, why = scenarios_for(list(SCENARIOS), demo.timings(), None)
    assert skipped
    assert "start it with" in why
    up = _up_endpoints(tmp_path / "up", _suggested(why), monkeypatch)

    run, skipped, why = scenarios_for(list(SCENARIOS), demo.timings(), running_timings(up))
    assert (run, skipped, why) == (list(SCENARIOS), [], "")
    theirs = plugin_scenarios()
    assert scenarios_for(theirs, demo.timings(), running_timings(up))[1] == []


def test_an_up_started_as_suggested_serves_the_request_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = _demo_settings(tmp_path / "demo", monkeypatch)
    _, _, why = scenarios_for(list(SCENARIOS), demo.timings(), None)
    up = _up_endpoints(tmp_path / "up", _suggested(why), monkeypatch)
    assert cases_missing(demo.timings(), running_timings(up)) == ""


def test_explicit_defaults_are_the_same_timings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Effective values are compared: an override equal to the definition's default, or an
    override of a type the demo does not run, changes nothing."""
    demo = _demo_settings(tmp_path / "demo", monkeypatch)
    parameters = json.loads(json.dumps(demo.parameters))
    default = installed().registry.latest("support").parameters
    key = next(k for k in default if k not in parameters["support"])
    parameters["support"][key] = default[key]
    parameters["unrelated"] = {"anything": 1}
    running = {**demo.timings(), "parameters": parameters}
    assert scenarios_for(list(SCENARIOS), demo.timings(), running)[1] == []
    assert cases_missing(demo.timings(), running) == ""


def test_an_up_without_the_case_files_classifier_names_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    demo = _demo_settings(tmp_path / "demo", monkeypatch)
    up = _up_endpoints(tmp_path / "up", {}, monkeypatch)
    why = cases_missing(demo.timings(), running_timings(up))
    assert "\n" not in why
    assert "INTERLOCK_MODELS" in why
    assert "INTERLOCK_PARAMETERS" in why
    assert cases_missing(demo.timings(), None)  # an `up` that wrote no timings: unknown


def test_attached_the_cases_needing_a_held_service_are_skipped_by_name() -> None:
    """The demo cannot hold down a service of another process's `up`: the two cases that
    need one are left out, named, and every other case runs."""
    cases = casefile.load(SHIPPED)
    run, skipped, why = attached_cases(cases)
    assert {c.scenario for c in skipped} == {"resume", "state_conflict"}
    assert {c.id for c in run} | {c.id for c in skipped} == {c.id for c in cases.cases}
    assert all(c.id in why for c in skipped)
    assert "\n" not in why
