"""A component's process keeps what it loaded at start-up out of the garbage collector's
generations: a full collection then walks only what the work allocates, not the ~170,000
objects of every module, class and function (walking those stopped a projector under load
for 0.1-0.6 s at a time)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from interlock.app import options


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_component_runs_with_its_start_up_objects_frozen(
    unfrozen: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: dict[str, int] = {}

    @contextmanager
    def servers(*_: Any, **__: Any) -> Iterator[tuple[str, str | None]]:
        yield "nats://127.0.0.1:4222", None

    def run_checked(_s: Any, _url: str, work: Any, *_: Any, **__: Any) -> None:
        seen["frozen"] = gc.get_freeze_count()
        work.close()

    async def work(*_: Any) -> None:
        return None

    monkeypatch.setenv("INTERLOCK_HOME", str(tmp_path))
    monkeypatch.setattr(options, "_servers", servers)
    monkeypatch.setattr(options, "_run_checked", run_checked)
    assert gc.get_freeze_count() == 0

    options.with_component("relay", work)

    assert seen["frozen"] > 10_000  # the modules loaded to get here, at least
