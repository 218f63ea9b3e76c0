"""The composition root's names and runners agree, and the simulator is an extra the root
adds to the runtime's components, not one of them."""

from __future__ import annotations

import os

import pytest

from interlock.app.composition import (
    CORE,
    EXTRAS,
    default_stack,
    names,
    resolve_name,
    stack_of,
)
from interlock.app.runners import components
from interlock.config.components import GATEWAY, PARTITION_HOST, SIMULATOR, STAGE_HOST
from interlock.config.settings import Settings
from interlock.contracts.partitions import PROJECTOR


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


def test_with_the_partition_host_the_stack_has_one_process_for_every_partition() -> None:
    hosted = default_stack("support", partitions=4, projector_host=True)
    alone = default_stack("support", partitions=4)

    assert [n for n in hosted if n.startswith(PROJECTOR)] == [PARTITION_HOST]
    assert [n for n in alone if n.startswith(PROJECTOR)] == [f"projector.{k}" for k in range(4)]
    assert hosted.index(PARTITION_HOST) == alone.index("projector.0")  # where the projector starts
    assert default_stack("support", projector_host=True) == default_stack("support")
    assert PARTITION_HOST in names()
    assert resolve_name(PARTITION_HOST) == PARTITION_HOST


@pytest.mark.parametrize(
    ("setting", "cpus", "partitions", "hosted"),
    [
        ("on", 64, 2, True),
        ("off", 1, 4, False),
        ("auto", 2, 4, True),
        ("auto", 4, 2, True),
        ("auto", 8, 4, False),
        ("on", 1, 1, False),  # one partition is the projector itself
    ],
)
def test_the_partition_host_is_the_default_on_a_small_machine(
    monkeypatch: pytest.MonkeyPatch, setting: str, cpus: int, partitions: int, hosted: bool
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: cpus)
    monkeypatch.setenv("INTERLOCK_PROJECTOR_HOST", setting)
    monkeypatch.setenv("INTERLOCK_PROJECTOR_PARTITIONS", str(partitions))
    s = Settings()

    assert s.hosts_partitions() is hosted
    assert (PARTITION_HOST in stack_of(s, "support")) is hosted
