"""The graph check accepts the shipped definitions and refuses broken ones, by name."""

from __future__ import annotations

import pytest

from interlock.contracts.definition import GENERIC_RESULTS
from interlock.contracts.errors import DefinitionError
from interlock.contracts.graphcheck import assert_valid, check
from interlock.definition import REVIEW_TARGET, Transition, WorkflowDefinition
from interlock.projector.engine import ACTIONS, GUARDS
from interlock.workflows.support.definition import SUPPORT_V1, SUPPORT_V2
from tests.support.graph_issues import issue_codes
from tests.support.workflows import REGISTRY


def _with_rows(definition: WorkflowDefinition, *rows: Transition) -> WorkflowDefinition:
    return definition.model_copy(update={"transitions": (*definition.transitions, *rows)})


@pytest.mark.parametrize("definition", list(REGISTRY), ids=str)
def test_shipped_definitions_pass_the_graph_check(definition: WorkflowDefinition) -> None:
    assert check(definition, GUARDS, ACTIONS) == []


def test_support_v1_is_the_sequential_seventeen_state_table() -> None:
    assert len(SUPPORT_V1.states) == 17
    assert {"RETRIEVING_POLICY", "INSPECTING_ACCOUNT"} <= set(SUPPORT_V1.states)


def test_support_v2_gathers_evidence_in_parallel_branches() -> None:
    (gather,) = SUPPORT_V2.parallel
    assert {b.label for b in gather.branches} == {"RETRIEVING_POLICY", "INSPECTING_ACCOUNT"}
    assert gather.join_target == "GENERATING_RECOMMENDATION"


def test_a_path_around_approval_is_refused() -> None:
    shortcut = Transition(
        source="VALIDATING_POLICY", event="POLICY_VALID", target="EXECUTING_ACTION"
    )
    assert "gate_bypass" in issue_codes(_with_rows(SUPPORT_V2, shortcut))


def test_an_unguarded_approval_is_refused() -> None:
    rows = tuple(
        t.model_copy(update={"guards": ()}) if t.event == "APPROVED" else t
        for t in SUPPORT_V2.transitions
    )
    assert "gate_bypass" in issue_codes(SUPPORT_V2.model_copy(update={"transitions": rows}))


def test_a_path_around_policy_validation_is_refused() -> None:
    skip = Transition(
        source="GENERATING_RECOMMENDATION",
        event="RECOMMENDATION_GENERATED",
        target="AWAITING_APPROVAL",
    )
    assert "gate_bypass" in issue_codes(_with_rows(SUPPORT_V2, skip))


def test_manual_review_may_not_resume_into_the_effect_state() -> None:
    bad = SUPPORT_V2.model_copy(
        update={"resumable_states": SUPPORT_V2.resumable_states | {"EXECUTING_ACTION"}}
    )
    assert any(t.target == REVIEW_TARGET for t in bad.transitions)
    assert "gate_bypass" in issue_codes(bad)


def test_unreachable_and_dead_end_states_are_reported() -> None:
    orphan = SUPPORT_V2.model_copy(update={"states": (*SUPPORT_V2.states, "LIMBO")})
    assert "unreachable_state" in issue_codes(orphan)
    stuck = _with_rows(orphan, Transition(source="CLASSIFYING", event="ESCALATE", target="LIMBO"))
    assert "no_exit" in issue_codes(stuck)


def test_dangling_names_are_reported_and_the_definition_refused() -> None:
    typo = _with_rows(
        SUPPORT_V2, Transition(source="CLASSIFYNG", event="START", target="CLASSIFYING")
    )
    with pytest.raises(DefinitionError, match="unknown_state"):
        assert_valid(typo, GUARDS, ACTIONS)


def test_unknown_guards_and_actions_are_reported() -> None:
    row = Transition(
        source="CLASSIFYING", event="ESCALATE", target="MANUAL_REVIEW", action="teleport"
    )
    assert "unknown_action" in issue_codes(_with_rows(SUPPORT_V2, row))


def test_terminal_states_have_no_exits() -> None:
    revive = Transition(source="CANCELLED", event="APPROVED", target="EXECUTING_ACTION")
    assert "terminal_exit" in issue_codes(_with_rows(SUPPORT_V2, revive))


def _with_stage(definition: WorkflowDefinition, state: str, **update: object) -> WorkflowDefinition:
    stages = dict(definition.stages)
    stages[state] = stages[state].model_copy(update=update)
    return definition.model_copy(update={"stages": stages})


def test_every_stage_names_the_results_it_emits() -> None:
    silent = _with_stage(SUPPORT_V2, "VALIDATING_POLICY", emits=())
    assert {"stage_emits_nothing", "result_not_emitted"} <= issue_codes(silent)


def test_a_stage_may_emit_only_results_of_its_definition() -> None:
    assert "unknown_event" in issue_codes(
        _with_stage(SUPPORT_V2, "CLASSIFYING", emits=("CLASSIFICATION_SUCCEEDED", "TELEPORTED"))
    )
    assert "not_a_result" in issue_codes(
        _with_stage(SUPPORT_V2, "CLASSIFYING", emits=("CLASSIFICATION_SUCCEEDED", "APPROVED"))
    )


@pytest.mark.parametrize("definition", list(REGISTRY), ids=str)
def test_each_result_of_the_shipped_definitions_has_a_stage_that_emits_it(
    definition: WorkflowDefinition,
) -> None:
    emitted = {e for s in definition.all_stages() for e in s.emits} | GENERIC_RESULTS
    results = {e.name for e in definition.events if e.source == "result"}
    assert results <= emitted


def test_an_any_of_gate_refuses_a_path_that_passes_none_of_its_events() -> None:
    from interlock_invoice import PLUGIN  # noqa: PLC0415  (an installed third-party plugin)

    *_, invoice = PLUGIN.definitions
    guards = {*GUARDS, *PLUGIN.guard_predicates()}
    assert check(invoice, guards, ACTIONS) == []
    skips = Transition(source="VALIDATING", event="TOTALS_MISMATCH", target="POSTING")
    issues = check(_with_rows(invoice, skips), guards, ACTIONS)
    assert "gate_bypass" in {i.code for i in issues}
    assert any("without APPROVED/INVOICE_VALID" in i.message for i in issues)
