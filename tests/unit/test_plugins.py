"""Loading plugins: the built-in workflows come through the entry point group like any other,
a plugin that does not fit its definition is refused naming plugin, row and problem, and a
refused plugin is skipped while the others load."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from typing import Any

import hello_workflow as hello
import pytest
from pydantic import BaseModel

from interlock import GuardInput, Plugin, Result, StageContext, check, guard, stage
from interlock.app.bindings import check_adapters
from interlock.config.errors import PluginError
from interlock.config.plugins import installed, load
from interlock.definition import Transition


def refusal(*plugins: object) -> PluginError:
    """The one refusal among `plugins` (the others load)."""
    loaded = load((f"p{i}", "dist 1.0", p) for i, p in enumerate(plugins))
    assert len(loaded.broken) == 1, loaded.broken
    return loaded.broken[0]


def graph_broken() -> Plugin:
    """The hello plugin with a row into a state it never declares."""
    broken = hello.definition()
    broken.on("GREETING", "GREETED", "NOWHERE")
    plugin: Plugin = dataclasses.replace(hello.PLUGIN, definitions=(broken.build(),))
    return plugin


def test_a_plugin_that_does_not_import_is_skipped_and_the_others_load() -> None:
    unimportable = PluginError("broken", "broken:PLUGIN", "cannot be imported: ImportError()")

    loaded = load([("broken", "broken 0.1", unimportable), ("hello", "hello 0.1", hello.PLUGIN)])

    assert set(loaded.plugins) == {"hello"}
    assert loaded.registry.workflow_types() == ["hello"]
    assert loaded.broken == (unimportable,)


def test_a_plugin_failing_the_graph_check_is_skipped_and_named_in_one_line() -> None:
    loaded = load([("greeter", "dist 1.0", graph_broken()), ("other", "dist 1.0", object())])

    assert loaded.plugins == {}
    first = loaded.broken[0]
    assert (first.plugin, first.workflow_type, first.row) == ("greeter", "hello", "hello v1")
    assert "NOWHERE" in first.problem
    assert all(len(str(e).splitlines()) == 1 for e in loaded.broken)


def test_a_plugin_whose_check_raises_refuses_only_itself() -> None:
    class Exploding(Plugin):
        def guard_predicates(self) -> Any:
            raise RuntimeError("boom")

    fields = {f.name: getattr(hello.PLUGIN, f.name) for f in dataclasses.fields(hello.PLUGIN)}
    exploding = Exploding(**fields)

    refused = refusal(exploding)

    assert "boom" in refused.problem


def test_a_command_needing_a_refused_plugin_gets_its_refusal() -> None:
    loaded = load([("greeter", "dist 1.0", graph_broken())])

    for name in ("hello", "greeter", "hello.greet"):
        with pytest.raises(PluginError) as refused:
            loaded.require(name)
        assert refused.value.plugin == "greeter"
    with pytest.raises(PluginError):
        loaded.plugin("hello")
    loaded.require("support")  # not claimed by a refused plugin: nothing to say


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
    refused = refusal(graph_broken())

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


def test_importing_the_cli_and_the_components_loads_no_plugin() -> None:
    """Wiring happens when a command runs: a module that validated plugins at import would
    turn one broken plugin into a traceback of every command, `--help` included."""
    probe = (
        "import interlock.cli, interlock.app.runners, interlock.tools.demo.fixture\n"
        "from interlock.config.plugins import installed\n"
        "print(installed.cache_info().misses)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )

    assert (done.returncode, done.stdout.strip()) == (0, "0"), done.stderr


def test_adapters_configured_for_a_refused_plugin_name_its_refusal() -> None:
    loaded = load([("greeter", "dist 1.0", graph_broken())])
    adapters = {"hello": {"greeter": {"base_url": "https://greet.example.com/v1/"}}}

    with pytest.raises(PluginError) as refused:
        check_adapters(adapters, loaded)

    assert refused.value.plugin == "greeter"
    assert "NOWHERE" in str(refused.value)


def test_a_table_cancelling_after_an_effect_is_refused_at_load_with_its_path() -> None:
    from interlock_invoice import PLUGIN as INVOICE  # noqa: PLC0415  (a third-party plugin)
    from interlock_invoice.definition import build  # noqa: PLC0415

    careless = build()
    careless.rows(Transition(source="MANUAL_REVIEW", event="CANCEL_REQUESTED", target="CANCELLED"))
    definitions = (*INVOICE.definitions[:-1], careless.build())

    refused = refusal(dataclasses.replace(INVOICE, definitions=definitions))

    assert refused.row == "invoice v3"
    assert "[broken_promise] invoice v3: CANCELLED promises no effect, but RECEIVED" in str(refused)
    assert str(refused).count("\n") == 0
