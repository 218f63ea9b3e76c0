"""The test kit refuses what the runtime refuses at load: a plugin whose table, stages or
guards would not deploy does not pass its tests either (`interlock.validate`)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

import interlock
from interlock.errors import PluginError
from interlock.testing import WorkflowTestEnv
from tests.unit.testkit_plugins import Sender, SendRequest, Sent, plugin, send_stage


def refusal(p: interlock.Plugin) -> str:
    with pytest.raises(PluginError) as refused:
        WorkflowTestEnv(p, adapters={"sender": Sender()})
    return str(refused.value)


def test_a_valid_plugin_passes_validate_and_runs() -> None:
    interlock.validate(plugin())

    assert WorkflowTestEnv(plugin()).plugin.workflow_type == "sender"


def test_an_undefined_target_state_is_refused_by_the_test_kit() -> None:
    message = refusal(plugin(lambda wf: wf.on("RECEIVED", "ESCALATE", "NOWHERE")))

    assert message.startswith("plugin sender: sender v1: ")
    assert "unknown_state" in message
    assert "NOWHERE" in message


def test_an_ungated_effect_is_refused_by_the_test_kit() -> None:
    message = refusal(plugin(gate=False))

    assert "ungated_effect" in message

    assert "SENDING" in message


def test_a_declared_effect_without_a_gate_is_refused_by_the_test_kit() -> None:
    """Declared the way the README shows (`wf.effect`), not listed as an effect state."""

    def edit(wf: interlock.Workflow) -> None:
        wf.effect("SENDING", committed=(Sent,))

    message = refusal(plugin(edit, gate=False, effect_state=False))

    assert "ungated_effect" in message
    assert "SENDING has no gate" in message


def test_a_follow_up_effect_needs_no_gate() -> None:
    def edit(wf: interlock.Workflow) -> None:
        wf.effect("SENDING", committed=(Sent,), gated=False)

    interlock.validate(plugin(edit, gate=False, effect_state=False))


def test_a_terminal_that_breaks_its_effect_promise_is_refused_by_the_test_kit() -> None:
    def edit(wf: interlock.Workflow) -> None:
        wf.effect("SENDING", committed=(Sent,), unknown=("ESCALATE",))
        wf.terminal("FAILED", effects="none")

    message = refusal(plugin(edit))

    assert "broken_promise" in message

    assert "FAILED" in message


def test_a_stage_reading_data_it_is_not_given_is_refused_by_the_test_kit() -> None:
    class Greedy(BaseModel):
        request: SendRequest
        secret: str

    message = refusal(plugin(stage=send_stage(reads=Greedy)))

    assert "stage 'send'" in message

    assert "reads ['secret']" in message


def test_a_guard_nobody_provides_is_refused_when_the_env_is_built_not_at_decision() -> None:
    message = refusal(plugin(guard="alowed"))

    assert "unknown_guard" in message

    assert "'alowed'" in message


def test_validate_names_plugin_row_and_problem_in_one_error() -> None:
    with pytest.raises(PluginError) as refused:
        interlock.validate(plugin(guard="alowed"))

    error = refused.value
    assert (error.plugin, error.row) == ("sender", "sender v1")
    assert "alowed" in error.problem
    assert "\n" not in str(error)
