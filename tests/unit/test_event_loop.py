"""The event loop a component runs on: uvloop where it is installed (or asked for), the
standard loop when asked for or when uvloop is missing, and a one-line refusal when uvloop is
asked for and missing."""

from __future__ import annotations

import asyncio
import importlib
from types import ModuleType

import pytest

from interlock.app import loops
from interlock.contracts.errors import ConfigurationError

uvloop = pytest.importorskip("uvloop")


async def _loop_type() -> type[asyncio.AbstractEventLoop]:
    return type(asyncio.get_running_loop())


def _without_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.import_module

    def import_module(name: str, package: str | None = None) -> ModuleType:
        if name == "uvloop":
            raise ImportError(name)
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", import_module)


@pytest.mark.parametrize("choice", ["auto", "uvloop"])
def test_auto_and_uvloop_run_on_uvloop_where_it_is_installed(choice: loops.EventLoop) -> None:
    assert issubclass(loops.run(_loop_type(), choice), uvloop.Loop)


def test_asyncio_runs_on_the_standard_loop() -> None:
    ran_on = loops.run(_loop_type(), "asyncio")

    assert not issubclass(ran_on, uvloop.Loop)
    assert issubclass(ran_on, asyncio.BaseEventLoop)


def test_auto_falls_back_to_the_standard_loop_without_uvloop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without_uvloop(monkeypatch)

    assert not issubclass(loops.run(_loop_type(), "auto"), uvloop.Loop)


def test_uvloop_asked_for_and_missing_is_refused_in_one_line_and_nothing_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without_uvloop(monkeypatch)
    ran = []

    async def work() -> None:
        ran.append(True)

    with pytest.raises(ConfigurationError) as refused:
        loops.run(work(), "uvloop")

    assert "\n" not in str(refused.value)
    assert "INTERLOCK_EVENT_LOOP=uvloop" in str(refused.value)
    assert ran == []
