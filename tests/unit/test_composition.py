"""The composition root's names and runners agree, and the simulator is an extra the root
adds to the runtime's components, not one of them."""

from __future__ import annotations

import os

import pytest

from interlock.app.composition import CORE, EXTRAS, default_stack, names, resolve_name
from interlock.app.runners import components
from interlock.config.components import GATEWAY, SIMULATOR, STAGE_HOST
from interlock.config.settings import Settings


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


def test_with_the_stage_host_the_stack_has_one_process_for_every_stage() -> None:
    assert default_stack("support", stage_host=True) == [*CORE, SIMULATOR, STAGE_HOST]
    assert STAGE_HOST in names()
    assert resolve_name(STAGE_HOST) == STAGE_HOST


@pytest.mark.parametrize(
    ("setting", "cpus", "hosted"),
    [("on", 64, True), ("off", 1, False), ("auto", 2, True), ("auto", 4, True), ("auto", 8, False)],
)
def test_the_stage_host_is_the_default_on_a_small_machine(
    monkeypatch: pytest.MonkeyPatch, setting: str, cpus: int, hosted: bool
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    monkeypatch.setenv("INTERLOCK_STAGE_HOST", setting)
    assert Settings().hosts_stages() is hosted
