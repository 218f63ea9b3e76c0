"""Components never live on as zombies: they reconnect without limit or exit to be restarted,
stop within their grace even when a connection hangs, report their own health, and the
supervisor says why a child exited."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from interlock.app.connections import CLOSED_GRACE, EXIT_CONNECTION_LOST, connection_options
from interlock.app.health import healthy
from interlock.app.supervisor import exit_reason
from interlock.cli.component import within_grace
from interlock.config.settings import Settings
from interlock.messaging.progress import Progress, Report

pytestmark = pytest.mark.timeout(20)


def test_components_reconnect_to_the_broker_without_limit() -> None:
    options = connection_options("relay", asyncio.Event())

    assert options["max_reconnect_attempts"] == -1


async def test_a_connection_closed_for_good_exits_the_process_unless_stopping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exits: list[int] = []
    exited = asyncio.Event()

    def exit_(code: int) -> None:
        exits.append(code)
        exited.set()

    monkeypatch.setattr("os._exit", exit_)
    monkeypatch.setattr("interlock.app.connections.CLOSED_GRACE", 0.01)
    stop = asyncio.Event()
    closed = connection_options("relay", stop)["closed_cb"]

    await closed()
    await asyncio.wait_for(exited.wait(), 5)  # the exit comes after the grace
    stop.set()
    await closed()

    assert exits == [EXIT_CONNECTION_LOST]


async def test_a_component_failing_on_its_own_is_not_exited_as_a_lost_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its connection closes while it unwinds; its own error must be the one reported."""
    scheduled: list[tuple[float, object]] = []
    loop = asyncio.get_running_loop()
    monkeypatch.setattr(loop, "call_later", lambda delay, fn: scheduled.append((delay, fn)))
    exits: list[int] = []
    monkeypatch.setattr("os._exit", exits.append)

    await connection_options("relay", asyncio.Event())["closed_cb"]()

    assert exits == []  # not at once: the failing component's own error comes first
    assert [delay for delay, _ in scheduled] == [CLOSED_GRACE]


async def test_a_component_that_ignores_stop_is_cancelled_after_its_grace() -> None:
    stop = asyncio.Event()

    async def stubborn() -> None:
        await asyncio.Event().wait()  # a drain on a dead connection: waits forever

    stop.set()
    began = time.monotonic()
    await within_grace(stubborn(), stop, Settings(shutdown_grace=0.3))

    assert time.monotonic() - began < 2.0


def test_the_supervisor_says_why_a_child_exited() -> None:
    assert exit_reason(-signal.SIGKILL) == "killed by SIGKILL"
    assert "broker connection" in exit_reason(EXIT_CONNECTION_LOST)
    assert exit_reason(3) == "exit status 3"


@pytest.mark.parametrize(
    ("report", "verdict"),
    [
        (Report(1, written_at=100.0, progress_at=99.0, connected=True), True),
        (Report(1, written_at=100.0, progress_at=99.0, connected=False), False),
        (Report(1, written_at=100.0, progress_at=40.0, connected=True), False),
        (Report(1, written_at=70.0, progress_at=70.0, connected=True), False),
    ],
    ids=["working", "disconnected", "stalled", "silent"],
)
def test_a_component_is_healthy_only_connected_and_progressing(
    report: Report, verdict: bool
) -> None:
    assert report.verdict(100.0, stalled_after=30.0)[0] is verdict


async def test_health_reads_the_components_own_report(tmp_path: Path) -> None:
    connected = [True]
    progress = Progress.of(tmp_path, "relay")
    progress.watch(lambda: connected[0])
    stop = asyncio.Event()
    writing = asyncio.create_task(progress.run(stop))
    try:
        await _until(lambda: healthy(tmp_path, "relay")[0])
        connected[0] = False
        await _until(lambda: not healthy(tmp_path, "relay")[0])
    finally:
        stop.set()
        await writing
    assert "not connected" in healthy(tmp_path, "relay")[1]
    assert not healthy(tmp_path, "timer")[0]  # no report at all


async def _until(condition: Callable[[], bool], within: float = 8.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)
