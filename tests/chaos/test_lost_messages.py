"""A message lost after the broker acknowledged it delays a workflow, never strands it: the
open-job sweeper re-dispatches the job the projector still waits for (same job id)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from interlock.contracts import subjects
from interlock.tools.demo.runner import approve
from tests.support.chaos_stack import Stack
from tests.support.cli import cli_env
from tests.support.polling import eventually

pytestmark = pytest.mark.timeout(120)
CLASSIFY = "support.classify"


async def test_a_job_deleted_from_the_stream_is_redispatched_and_the_workflow_completes(
    stack: Stack,
) -> None:
    await stack.supervisor.hold(CLASSIFY)
    run = await stack.workflow()
    js = stack.admin.jetstream()

    async def queued_job() -> Any:
        try:
            job = await js.get_last_msg(subjects.STREAM_JOBS, subjects.job("support", "classify"))
        except Exception:
            return None
        # this workflow's (the stack may have run others before this module)
        return job if job.data and run.workflow_id.encode() in job.data else None

    job = await eventually(queued_job, what="the classify job in its stream")
    assert await js.delete_msg(subjects.STREAM_JOBS, job.seq)  # acknowledged, then lost

    await stack.supervisor.release(CLASSIFY)

    await approve(run, await asyncio.wait_for(run.next_task(), 60))
    done = await asyncio.wait_for(run.wait_state("COMPLETED"), 60)
    assert await stack.effects(run) == 1
    classified = [a for a in done["audit"] if a["event_type"] == "CLASSIFICATION_SUCCEEDED"]
    assert [a["accepted"] for a in classified] == [True]


async def _health(stack: Stack, name: str) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "interlock", "health", name),
        env=cli_env(stack.home, INTERLOCK_NATS_URL="nats://unused:1"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await process.communicate()
    return process.returncode or 0, out.decode()


async def test_health_is_the_components_own_word_on_its_connection_and_progress(
    stack: Stack,
) -> None:
    assert (await _health(stack, "relay"))[0] == 0
    assert (await _health(stack, "support.classify"))[0] == 0

    await stack.supervisor.hold("relay")
    try:

        async def unhealthy() -> str | None:
            code, said = await _health(stack, "relay")
            return said if code == 1 else None

        said = await eventually(unhealthy, what="the held relay reported unhealthy", within=30)
    finally:
        await stack.supervisor.release("relay")

    assert "no report for" in said
