"""The demo's timings, and what it may run attached to an `interlock up` that has others.

The demo shortens the approval SLA, the retry backoff and the external timeout so that its
scenarios finish in seconds; a running stack started without them has production timings,
under which a scenario that waits out a timer or injects a fault would fail or take minutes.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from interlock.settings import Settings
from interlock.tools.demo.plugins import PluginScenario, scenario_parameters
from interlock.tools.demo.scenarios import Scenario

DEMO_ENV = {
    "INTERLOCK_PARAMETERS": '{"support": {"approval_sla_seconds": 6, "retry_delay_scale": 0.02}}',
    "INTERLOCK_EXTERNAL_TIMEOUT": "0.5",
}
TIMED = frozenset({"approval_expiry"})
"""Scenarios that wait out a timer of the demo's length; every scenario with faults also
depends on the retry backoff or the external timeout the demo sets."""

Runnable = TypeVar("Runnable", bound=Scenario | PluginScenario)


def demo_environment() -> dict[str, str]:
    """`DEMO_ENV` with every installed plugin's scenario parameters added."""
    parameters = {**json.loads(DEMO_ENV["INTERLOCK_PARAMETERS"]), **scenario_parameters()}
    return {**DEMO_ENV, "INTERLOCK_PARAMETERS": json.dumps(parameters)}


def depends_on_timings(scenario: Scenario | PluginScenario) -> bool:
    """A built-in scenario with faults or a demo-length timer; every plugin scenario (it runs
    with the parameters its plugin asks of the demo)."""
    if isinstance(scenario, PluginScenario):
        return True
    return bool(scenario.faults) or scenario.name in TIMED


def scenarios_for(
    chosen: list[Runnable], mine: dict[str, Any], running: dict[str, Any] | None
) -> tuple[list[Runnable], list[Runnable], str]:
    """`(to run, skipped, why)`: attached to components whose timings (`running`, None when
    unknown) differ from the demo's (`mine`), the scenarios that depend on them are skipped."""
    if running == mine:
        return chosen, [], ""
    timed = [sc for sc in chosen if depends_on_timings(sc)]
    why = (
        "the running `interlock up` has other timings than the demo's; to run them all, stop "
        "it, or start it with "
        + " ".join(f"{key}='{value}'" for key, value in demo_environment().items())
    )
    return [sc for sc in chosen if sc not in timed], timed, why if timed else ""


def running_timings(s: Settings) -> dict[str, Any] | None:
    """The timings the running `interlock up` wrote to its endpoints file; None if unknown."""
    try:
        found = json.loads((s.home / "endpoints.json").read_text()).get("timings")
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None
