"""The graph check knows what a terminal means: a table that lets a no-effect terminal follow
a committed effect is refused with the path that does it; the shipped definitions keep every
promise they declare."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from interlock import Effect, Terminal, effect_is
from interlock.cli import app
from interlock.contracts.effectcheck import counterexamples
from interlock.contracts.graphcheck import check
from interlock.definition import Transition, WorkflowDefinition
from interlock.workflows.support.definition import SUPPORT_V2, SUPPORT_V3
from tests.support.workflows import REGISTRY

REFUND = "EXECUTING_ACTION"


def _first(definition: WorkflowDefinition, *rows: Transition) -> WorkflowDefinition:
    return definition.model_copy(update={"transitions": (*rows, *definition.transitions)})


def _messages(definition: WorkflowDefinition) -> list[str]:
    return [i.message for i in check(definition) if i.code == "broken_promise"]


def test_support_v2_with_its_promises_declared_is_caught_cancelling_after_the_refund() -> None:
    effects = tuple(e.model_copy(update={"confirmed": ()}) for e in SUPPORT_V3.effects)
    declared = SUPPORT_V2.model_copy(update={"effects": effects, "terminals": SUPPORT_V3.terminals})

    messages = _messages(declared)

    cancelled = next(m for m in messages if " CANCELLED promises no effect" in m)
    assert cancelled.startswith("support v2: CANCELLED promises no effect, but REQUEST_RECEIVED")
    assert f"{REFUND} unknown" in cancelled or f"{REFUND} committed" in cancelled
    assert any("REJECTED promises no effect" in m for m in messages)
    assert any("COMPLETED promises" in m for m in messages)


def test_an_unguarded_cancel_from_review_is_refused_with_its_counterexample_path() -> None:
    broken = _first(
        SUPPORT_V3, Transition(source="MANUAL_REVIEW", event="CANCEL_REQUESTED", target="CANCELLED")
    )

    (message,) = _messages(broken)

    assert message.startswith("support v3: CANCELLED promises no effect, but ")
    assert "-APPROVED-> EXECUTING_ACTION" in message
    assert message.endswith(
        "-CANCEL_REQUESTED-> CANCELLED reaches it with EXECUTING_ACTION unknown"
    )


def test_a_row_shadowed_by_an_effect_guard_that_holds_is_not_followed() -> None:
    guarded = _first(
        SUPPORT_V3,
        Transition(
            source="MANUAL_REVIEW",
            event="CANCEL_REQUESTED",
            target="CANCELLED",
            guards=(effect_is(None, "none"),),
        ),
    )

    assert _messages(guarded) == []


def test_completed_without_the_notification_breaks_its_promise() -> None:
    shortcut = _first(
        SUPPORT_V3,
        Transition(source="NOTIFYING_CUSTOMER", event="PERMANENT_ERROR", target="COMPLETED"),
    )

    (message,) = _messages(shortcut)

    assert "COMPLETED promises EXECUTING_ACTION/NOTIFYING_CUSTOMER committed" in message


def test_an_unknown_outcome_may_not_end_a_workflow() -> None:
    ends = _first(
        SUPPORT_V3,
        Transition(source=REFUND, event="ESCALATE", target="FAILED_COMPENSATED"),
    )

    (message,) = _messages(ends)

    assert "FAILED_COMPENSATED promises every effect reversed" in message


def test_a_declared_effect_must_name_events_the_definition_has() -> None:
    typo = SUPPORT_V3.model_copy(
        update={"effects": (Effect(state=REFUND, committed=("ACTION_EXECUTD",)),)}
    )

    assert "unknown_event" in {i.code for i in check(typo)}


def test_a_promise_must_name_a_terminal_state() -> None:
    wrong = SUPPORT_V3.model_copy(
        update={"terminals": (Terminal(state="MANUAL_REVIEW", effects="none"),)}
    )

    assert "unknown_state" in {i.code for i in check(wrong)}


@pytest.mark.parametrize("definition", list(REGISTRY), ids=str)
def test_every_shipped_definition_keeps_its_promises(definition: WorkflowDefinition) -> None:
    assert counterexamples(definition) == []


def test_the_latest_support_definition_declares_its_refund_and_every_terminal() -> None:
    latest = REGISTRY.latest("support")

    assert {e.state for e in latest.effects} == {REFUND, "NOTIFYING_CUSTOMER"}
    assert {t.state for t in latest.terminals} == set(latest.terminal_states)


def test_graph_json_shows_each_states_kind_effect_facts_and_promise() -> None:
    result = CliRunner().invoke(app, ["graph", "support", "--json"])

    assert result.exit_code == 0, result.output
    states = {s["name"]: s for s in json.loads(result.stdout)["states"]}
    assert states["EXECUTING_ACTION"]["kind"] == "effect"
    assert states["CANCELLED"]["effects"][REFUND] == ["none"]
    assert states["CANCELLED"]["promise"]["effects"] == "none"
    assert states["MANUAL_REVIEW"]["effects"][REFUND] == ["none", "committed", "unknown"]
    assert states["COMPLETED"]["effects"] == {
        REFUND: ["committed"],
        "NOTIFYING_CUSTOMER": ["committed"],
    }


@pytest.mark.parametrize(
    ("receipt", "said"),
    [("[1]", "--receipt must be a JSON object"), ("{oops", "--receipt is not JSON")],
)
def test_a_receipt_that_is_no_json_object_is_one_line_and_nothing_is_sent(
    receipt: str, said: str
) -> None:
    result = CliRunner().invoke(app, ["effect", "confirm", "wf-none", "--receipt", receipt])

    assert result.exit_code == 2
    assert said in result.output
    assert len(result.output.strip().splitlines()) == 1
