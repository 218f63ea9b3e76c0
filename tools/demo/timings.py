"""The demo's timings, and what it may run attached to an `interlock up` that has others.

The demo shortens the approval SLA, the retry backoff and the external timeout so that its
scenarios finish in seconds; a running stack started without them has production timings,
under which a scenario that waits out a timer or injects a fault would fail or take minutes.
Its request cases need, besides their workflow's short timings and the case file's attempt
limit, the case file's recorded classifier answers.

What is compared is what each side runs with: the settings' values over the installed
definitions' defaults (`effective`), for the types the scenarios or the cases run — so an
override that equals a default, or one of a type the demo does not run, is no difference.
The running side is what the `interlock up` wrote to `<home>/endpoints.json`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from interlock.app.composition import default_stack
from interlock.app.health import attached
from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.tools.demo.casefile import Case, Fixture
from interlock.tools.demo.plugins import PluginScenario, scenario_parameters
from interlock.tools.demo.scenarios import Scenario

DEMO_ENV = {
    "INTERLOCK_PARAMETERS": '{"support": {"approval_sla_seconds": 6, "retry_delay_scale": 0.02}}',
    "INTERLOCK_EXTERNAL_TIMEOUT": "0.5",
}
TIMED = frozenset({"approval_expiry"})
"""Scenarios that wait out a timer of the demo's length; every scenario with faults also
depends on the retry backoff or the external timeout the demo sets."""
CASES_TYPE = "request"
ROUTE = "request.route"
HELD = {"resume": ROUTE, "state_conflict": "request.validate"}
"""Scenarios whose timing the runner controls by holding a stage service down (killed and
kept down) from before the first publication until the case has done its part."""

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


def effective(timings: Mapping[str, Any], types: Iterable[str]) -> dict[str, Any]:
    """Per type in `types`, the parameters a process with these `timings` (as
    `Settings.timings()` gives them) runs: its overrides over the installed definition's."""
    registry = installed().registry
    known = set(registry.workflow_types())
    overrides = timings.get("parameters") or {}
    return {
        t: {**(registry.latest(t).parameters if t in known else {}), **overrides.get(t, {})}
        for t in sorted(set(types))
    }


def _model_of(timings: Mapping[str, Any], workflow_type: str) -> str | None:
    models = timings.get("models") or {}
    return models.get(workflow_type, timings.get("model"))


def _types_of(chosen: Iterable[Scenario | PluginScenario]) -> set[str]:
    return {sc.workflow_type if isinstance(sc, PluginScenario) else "support" for sc in chosen}


def suggestion(mine: Mapping[str, Any]) -> str:
    """The settings to start `interlock up` with for the demo to run everything on it."""
    env = {
        "INTERLOCK_PARAMETERS": json.dumps(mine.get("parameters") or {}),
        "INTERLOCK_EXTERNAL_TIMEOUT": str(mine.get("external_timeout")),
    }
    if mine.get("models"):
        env["INTERLOCK_MODELS"] = json.dumps(mine["models"])
    return " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())


def scenarios_for(
    chosen: list[Runnable], mine: Mapping[str, Any], running: Mapping[str, Any] | None
) -> tuple[list[Runnable], list[Runnable], str]:
    """`(to run, skipped, why)`: attached to components whose timings (`running`, None when
    unknown) differ from the demo's (`mine`), the scenarios that depend on them are skipped."""
    timed = [sc for sc in chosen if depends_on_timings(sc)]
    types = _types_of(timed)
    if running is not None and (
        effective(running, types) == effective(mine, types)
        and running.get("external_timeout") == mine.get("external_timeout")
    ):
        return chosen, [], ""
    why = (
        "the running `interlock up` has other timings than the demo's; to run them all, stop "
        "it, or start it with " + suggestion(mine)
    )
    return [sc for sc in chosen if sc not in timed], timed, why if timed else ""


def cases_missing(mine: Mapping[str, Any], running: Mapping[str, Any] | None) -> str:
    """What the running `interlock up` lacks to serve the request cases ('' if nothing): the
    case file's recorded classifier, the request workflow's timings and attempt limit."""
    if running is None:
        missing = ["its settings (it wrote no timings to its endpoints file)"]
    else:
        missing = []
        if _model_of(running, CASES_TYPE) != _model_of(mine, CASES_TYPE):
            missing.append(
                f"the case file's classifier ({_model_of(mine, CASES_TYPE)}; INTERLOCK_MODELS)"
            )
        if effective(running, [CASES_TYPE]) != effective(mine, [CASES_TYPE]):
            missing.append(
                "the request workflow's demo timings and attempt limit (INTERLOCK_PARAMETERS)"
            )
    if not missing:
        return ""
    return (
        f"the running `interlock up` lacks {' and '.join(missing)}; stop it, or start it with "
        + suggestion(mine)
    )


def attached_cases(fixture: Fixture) -> tuple[list[Case], list[Case], str]:
    """`(to run, skipped, why)` on another process's `interlock up`: the demo cannot hold one
    of its services down, so the cases that need one held are left out, by name."""
    run = [c for c in fixture.cases if c.scenario not in HELD]
    skipped = [c for c in fixture.cases if c.scenario in HELD]
    held = sorted({HELD[c.scenario] for c in skipped})
    why = (
        f"skipped request cases {', '.join(c.id for c in skipped)}: they need "
        f"{' and '.join(held)} held down, which only the demo's own components allow; stop "
        "`interlock up` to run them"
    )
    return run, skipped, why if skipped else ""


async def cases_not_served(s: Settings, nats_url: str) -> str:
    """Why the `interlock up` the demo attached to cannot serve the request cases ('' if it
    can): what its settings lack, else the request stages nobody there is fetching for."""
    why = cases_missing(s.timings(), running_timings(s))
    if why:
        return why
    stages = [n for n in default_stack(CASES_TYPE) if n.startswith(f"{CASES_TYPE}.")]
    idle = [name for name in stages if not (await attached(name, nats_url))[0]]
    if idle:
        return (
            f"the running `interlock up` runs no {', '.join(idle)} (started with --only?); "
            "stop it, or start it with every component"
        )
    return ""


def running_timings(s: Settings) -> dict[str, Any] | None:
    """The timings the running `interlock up` wrote to its endpoints file; None if unknown."""
    try:
        found = json.loads((s.home / "endpoints.json").read_text()).get("timings")
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None
