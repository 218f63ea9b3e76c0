"""The bounds of the stuck rule and the waits on a person, resolved from definitions and a
deployment's overrides (pure: no database)."""

from __future__ import annotations

from interlock.config.plugins import installed
from interlock.config.settings import Settings
from interlock.contracts.graphcheck import check
from interlock.contracts.progress import (
    STUCK_AFTER,
    STUCK_AFTER_BY_STATE,
    human_states,
    progress_bounds,
    wait_rules,
)
from interlock.definition import HumanWait
from interlock.workflows.support.definition import SUPPORT_V2 as SUPPORT


def test_without_parameters_every_non_terminal_state_has_the_installation_default() -> None:
    bounds = progress_bounds([SUPPORT], {}, 300.0)
    assert bounds[("support", "CLASSIFYING")] == 300.0
    assert ("support", "COMPLETED") not in bounds


def test_a_per_state_bound_wins_over_the_definition_level_one() -> None:
    overrides = {"support": {STUCK_AFTER: 60, STUCK_AFTER_BY_STATE: {"CLASSIFYING": 5}}}
    bounds = progress_bounds([SUPPORT], overrides, 300.0)
    assert bounds[("support", "CLASSIFYING")] == 5.0
    assert bounds[("support", "VALIDATING_POLICY")] == 60.0


def test_declared_waits_are_waits_on_a_person_and_the_retry_wait_is_not() -> None:
    declared = SUPPORT.model_copy(
        update={"human_waits": (HumanWait(state="EXECUTING_ACTION", owner_role="x"),)}
    )
    found = human_states([declared])
    assert {("support", "MANUAL_REVIEW"), ("support", "EXECUTING_ACTION")} <= found
    assert ("support", "RETRY_WAIT") not in found


def test_a_wait_takes_its_parameters_with_the_deployment_overrides() -> None:
    wait = HumanWait(
        state="MANUAL_REVIEW",
        owner_role="support_supervisor",
        deadline_param="review_deadline_seconds",
        reminder_every_param="review_reminder_seconds",
    )
    declared = SUPPORT.model_copy(update={"human_waits": (wait,)})
    (rule,) = wait_rules([declared], {"support": {"review_deadline_seconds": 2}})
    assert (rule.state, rule.owner_role, rule.deadline_s) == ("MANUAL_REVIEW", wait.owner_role, 2)
    assert rule.announcement == "manual_review"


def test_every_type_accepts_the_stuck_bounds_as_overrides() -> None:
    overrides = {"support": {STUCK_AFTER: 5, STUCK_AFTER_BY_STATE: {"CLASSIFYING": 1}}}
    assert Settings(parameters=overrides).parameters == overrides


def test_every_installed_wait_on_a_person_is_declared_with_its_parameters() -> None:
    declared = {(d.workflow_type, w.state): d for d in installed().registry for w in d.human_waits}
    assert {
        ("support", "AWAITING_APPROVAL"),
        ("support", "MANUAL_REVIEW"),
        ("request", "approval_required"),
        ("request", "review"),
        ("invoice", "MANUAL_REVIEW"),
        ("invoice", "APPROVAL_ESCALATED"),
    } <= set(declared)
    for d in declared.values():
        for wait in d.human_waits:
            assert wait.state in d.states
            assert {wait.deadline_param, wait.reminder_every_param} <= set(d.parameters)


def test_a_wait_on_a_state_the_definition_lacks_fails_the_graph_check() -> None:
    wrong = SUPPORT.model_copy(
        update={"human_waits": (HumanWait(state="ON_HOLD", owner_role="operator"),)}
    )
    issues = check(wrong)
    assert any(i.code == "unknown_state" and "ON_HOLD" in i.message for i in issues)
