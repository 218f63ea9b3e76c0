"""`interlock demo` attached to a running `interlock up` with other timings runs only the
scenarios that do not depend on them, and names the ones it skipped and why."""

from __future__ import annotations

from interlock.tools.demo import demo_environment, scenarios_for
from interlock.tools.demo.plugins import plugin_scenarios
from interlock.tools.demo.scenarios import SCENARIOS

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
    assert demo_environment()["INTERLOCK_PARAMETERS"] in why


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
