"""The supervisor says why a child exited: its exit status in words and the last lines the
child wrote to its log, so a console user need not open the log to learn why."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from interlock.app.supervisor import Supervisor
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(60)


async def test_a_child_that_exits_is_reported_with_its_last_log_lines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    env = {**os.environ, "INTERLOCK_HOME": str(tmp_path), "INTERLOCK_LOG_LEVEL": "loud"}
    supervisor = Supervisor({"relay": env}, tmp_path / "logs")
    caplog.set_level(logging.WARNING, logger="interlock.app.supervisor")
    await supervisor.start()
    try:

        async def reported() -> str | None:
            found = [r.getMessage() for r in caplog.records if "exited" in r.getMessage()]
            return found[0] if found else None

        message = await eventually(reported, within=30, what="the exit report")
    finally:
        await supervisor.stop()
    assert "exit status 2" in message
    assert "INTERLOCK_LOG_LEVEL" in message
