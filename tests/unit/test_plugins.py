"""Loading plugins: the built-in workflows come through the entry point group like any other,
and a plugin that does not fit its definition is refused naming plugin, row and problem."""

from __future__ import annotations

import dataclasses
from typing import Any

import hello_workflow as hello
import pytest
from pydantic import BaseModel

from interlock import GuardInput, Plugin, Result, StageContext, Transition, check, guard, stage
from interlock.plugins import PluginError, installed, load


def refusal(*plugins: object) -> PluginError:
    with pytest.raises(PluginError) as refused:
        load((f"p{i}", "dist 1.0", p) for i, p in enumerate(plugins))
    return refused.value


def test_the_runtimes_own_workflows_load_through_the_entry_point_group() -> None:
    loaded = installed().plugins

    assert {"support", "request"} <= set(loaded)
    assert loaded["support"].distribution.startswith("interlock ")
    assert loaded["support"].entry_point == "support"
    assert installed().registry.versions("support") == [1, 2, 3]


def test_a_fitting_plugin_is_loaded_with_its_definitions() -> None:
    loaded = load([("hello", "hello 0.1", hello.PLUGIN)])

    assert loaded.registry.latest("hello").version == 1
    assert loaded.plugin("hello") is hello.PLUGIN


def test_two_plugins_claiming_one_workflow_type_are_refused() -> None:
    refused = refusal(hello.PLUGIN, hello.PLUGIN)

    assert refused.plugin == "p1"
    assert "already provided by plugin p0" in refused.problem


def test_an_entry_point_that_is_not_a_plugin_is_refused() -> None:
    assert "not a Plugin" in refusal(object()).problem


def test_a_definition_failing_the_graph_check_is_refused() -> None:
    broken = hello.definition()
    broken.on("GREETING", "GREETED", "NOWHERE")

    refused = refusal(dataclasses.replace(hello.PLUGIN, definitions=(broken.build(),)))

    assert refused.row == "hello v1"
    assert "NOWHERE" in refused.problem


def test_a_job_no_stage_handles_is_refused() -> None:
    refused = refusal(dataclasses.replace(hello.PLUGIN, stages=()))

    assert refused.row == "hello v1 stage 'greet'"
    assert "no stage handles it" in refused.problem


def test_a_stage_the_definition_never_dispatches_is_refused() -> None:
    @stage("wave", reads=hello.GreetInputs, emits=(hello.Greeted,))
    async def wave(job: hello.GreetInputs, ctx: StageContext) -> Result:
        raise AssertionError("never run")

    refused = refusal(dataclasses.replace(hello.PLUGIN, stages=(*hello.PLUGIN.stages, wave)))

    assert (refused.row, refused.problem) == ("stage 'wave'", "no definition dispatches it")


def test_a_stage_reading_data_its_job_is_not_given_is_refused() -> None:
    class Greedy(BaseModel):
        request: hello.HelloRequest
        secrets: dict[str, str]

    refused = refusal(with_stage(reads=Greedy))

    assert "reads ['secrets']" in refused.problem


def test_a_result_model_unlike_its_events_payload_is_refused() -> None:
    class Shouted(Result):
        __event__ = "GREETED"
        text: str
        volume: int

    refused = refusal(with_stage(emits=(Shouted,)))

    assert refused.row == "hello v1 stage 'greet'"
    assert "Shouted does not match GREETED's payload model" in refused.problem


def test_a_result_the_stage_may_not_submit_is_refused() -> None:
    class Waved(Result):
        __event__ = "WAVED"

    refused = refusal(with_stage(emits=(hello.Greeted, Waved)))

    assert "emits WAVED" in refused.problem


def test_the_builder_writes_rows_in_the_order_given() -> None:
    definition = hello.PLUGIN.definitions[0]

    rows = definition.transitions_from("GREETING", "RETRYABLE_ERROR")

    assert [(r.target, r.action) for r in rows] == [
        ("GREETING", "schedule_retry"),
        ("FAILED", None),
    ]
    assert isinstance(rows[0], Transition)


def with_stage(**changes: Any) -> Plugin:
    greet = dataclasses.replace(hello.greet, **changes)
    plugin: Plugin = dataclasses.replace(hello.PLUGIN, stages=(greet,))
    return plugin


def test_a_row_naming_a_guard_nobody_provides_is_refused() -> None:
    wf = hello.definition()
    wf.on("GREETING", "GREETED", "GREETED", guards=(check("kind_enough"),))

    refused = refusal(dataclasses.replace(hello.PLUGIN, definitions=(wf.build(),)))

    assert refused.row == "hello v1"
    assert "kind_enough" in refused.problem


def test_a_plugin_guard_may_not_take_a_built_in_guards_name() -> None:
    @guard
    def has_data(g: GuardInput) -> bool:
        return True

    refused = refusal(dataclasses.replace(hello.PLUGIN, guards=(has_data,)))

    assert (refused.row, refused.problem) == (
        "guard 'has_data'",
        "has the name of a built-in guard",
    )


def test_a_table_cancelling_after_an_effect_is_refused_at_load_with_its_path() -> None:
    from interlock_invoice import PLUGIN as INVOICE  # noqa: PLC0415  (a third-party plugin)
    from interlock_invoice.definition import build  # noqa: PLC0415

    careless = build()
    careless.rows(Transition(source="MANUAL_REVIEW", event="CANCEL_REQUESTED", target="CANCELLED"))
    definitions = (*INVOICE.definitions[:-1], careless.build())

    refused = refusal(dataclasses.replace(INVOICE, definitions=definitions))

    assert refused.row == "invoice v2"
    assert "[broken_promise] invoice v2: CANCELLED promises no effect, but RECEIVED" in str(refused)
    assert str(refused).count("\n") == 0
