"""`Supervisor.kill` on a child that died on its own, before the supervisor restarted it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from interlock.app.supervisor import Supervisor


async def test_killing_a_child_that_already_exited_says_it_is_not_running(
    tmp_path: Path,
) -> None:
    supervisor = Supervisor({"relay": {}}, tmp_path)
    child = supervisor.children["relay"]
    child.process = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await child.process.wait()  # exited and reaped; its watcher has not restarted it yet

    with pytest.raises(LookupError, match="relay is not running"):
        supervisor.kill("relay")
