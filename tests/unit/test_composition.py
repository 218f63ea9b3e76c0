"""The composition root's names and runners agree, and the simulator is an extra the root
adds to the runtime's components, not one of them."""

from __future__ import annotations

from interlock.components import components
from interlock.composition import EXTRAS, GATEWAY, SIMULATOR, default_stack, names, resolve_name
from interlock.runtime import CORE


def test_every_component_name_has_a_runner_and_every_runner_a_name() -> None:
    assert sorted(components()) == sorted(names())


def test_the_simulator_is_an_extra_not_a_core_component() -> None:
    assert SIMULATOR in EXTRAS
    assert SIMULATOR not in CORE


def test_the_default_stack_still_starts_the_simulator_after_the_core() -> None:
    stack = default_stack("support")
    assert stack[: len(CORE) + 1] == [*CORE, SIMULATOR]
    assert GATEWAY not in stack
    assert all(name.startswith("support.") for name in stack[len(CORE) + 1 :])


def test_a_stage_may_be_named_without_its_workflow_type_when_unambiguous() -> None:
    assert resolve_name("classify") == "support.classify"
    assert resolve_name(SIMULATOR) == SIMULATOR
