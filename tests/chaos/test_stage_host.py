"""The stage host: every stage service in one process. Workflows run through it as through
one process per stage; killed (-9) in the middle of an effect, it is restarted with all its
stages and every workflow completes with exactly one effect."""

from __future__ import annotations

import asyncio

import pytest

from interlock.app.health import attached, healthy
from interlock.config.components import STAGE_HOST
from interlock.messaging.crashpoints import arm, armed
from interlock.simulators import notification_count
from interlock.tools.demo.runner import approve
from tests.support.chaos_stack import Stack
from tests.support.polling import eventually
from tests.support.workflows import REGISTRY

pytestmark = pytest.mark.timeout(150)


async def test_the_host_is_one_process_running_every_stage(hosted_stack: Stack) -> None:
    names = set(hosted_stack.supervisor.pids())
    assert STAGE_HOST in names
    assert not [n for n in names if "." in n]  # no stage has a process of its own

    async def every_stage_fetching() -> bool:
        return (await attached(STAGE_HOST, hosted_stack.nats_url))[0]

    await eventually(every_stage_fetching, what="every hosted stage's pull request")

    async def every_stage_healthy() -> bool:
        return healthy(hosted_stack.home, STAGE_HOST)[0]

    await eventually(every_stage_healthy, what="every hosted stage's health report")
    stages = [f"{t}.{s}" for t, s in REGISTRY.stages()]
    assert all(healthy(hosted_stack.home, name)[0] for name in stages)


async def test_workflows_complete_through_the_host_with_one_effect_each(
    hosted_stack: Stack,
) -> None:
    runs = await asyncio.gather(*(hosted_stack.workflow() for _ in range(4)))
    for run in runs:
        await approve(run, await asyncio.wait_for(run.next_task(), 60))

    done = await asyncio.gather(*(asyncio.wait_for(r.wait_state("COMPLETED"), 90) for r in runs))

    assert [d["state"] for d in done] == ["COMPLETED"] * 4
    for run in runs:
        assert await hosted_stack.effects(run) == 1
        assert await notification_count(hosted_stack.dsn, customer_id=run.customer_id) == 1


async def test_the_host_killed_after_an_effect_restarts_every_stage_and_doubles_nothing(
    hosted_stack: Stack,
) -> None:
    pid = hosted_stack.supervisor.pids()[STAGE_HOST]
    point = "support.execute_action.after_effect"
    arm(hosted_stack.crash_dir, point)
    others = await asyncio.gather(*(hosted_stack.workflow() for _ in range(3)))
    run = await hosted_stack.workflow()
    await approve(run, await asyncio.wait_for(run.next_task(), 60))

    done = await asyncio.wait_for(run.wait_state("COMPLETED"), 90)
    for other in others:
        await approve(other, await asyncio.wait_for(other.next_task(), 60))
    finished = await asyncio.gather(
        *(asyncio.wait_for(o.wait_state("COMPLETED"), 90) for o in others)
    )

    assert not armed(hosted_stack.crash_dir, point)  # the host died there
    assert hosted_stack.supervisor.pids()[STAGE_HOST] != pid  # and was restarted
    assert done["state"] == "COMPLETED"
    assert [f["state"] for f in finished] == ["COMPLETED"] * 3
    for each in [run, *others]:
        assert await hosted_stack.effects(each) == 1
