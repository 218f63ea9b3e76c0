"""Kill -9 at every crash boundary of the effect, and duplicate a job under two workers:
the workflow completes and the provider's ledger holds exactly one effect."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from nats.js.errors import NotFoundError

from interlock.contracts import subjects
from interlock.simulators import calls
from interlock.tools.demo.runner import Run, approve
from tests.support.chaos_stack import Stack
from tests.support.polling import eventually

EXECUTE = "support.execute_action"
pytestmark = pytest.mark.timeout(120)


async def _approved(run: Run) -> None:
    await approve(run, await asyncio.wait_for(run.next_task(), 60))


async def _completed(run: Run) -> dict[str, Any]:
    return await asyncio.wait_for(run.wait_state("COMPLETED"), 60)


async def test_crash_before_the_call_resumes_with_one_effect(stack: Stack) -> None:
    run = await stack.workflow()
    await _held_at_execution(stack, run)

    await stack.supervisor.release(EXECUTE)

    await _completed(run)
    assert await stack.effects(run) == 1


async def test_crash_after_the_effect_before_the_result_reconciles_with_one_effect(
    stack: Stack,
) -> None:
    run = await stack.workflow(faults={"execute": ["lose_response"]})
    await _approved(run)

    async def effect_recorded() -> bool:
        return await stack.effects(run) == 1

    await eventually(effect_recorded, what="the provider's effect")
    await stack.supervisor.hold(EXECUTE)  # the service is still waiting for a lost answer
    view = await run.view()
    assert view is not None
    assert view["state"] == "EXECUTING_ACTION"  # the result was never submitted

    await stack.supervisor.release(EXECUTE)

    done = await _completed(run)
    assert await stack.effects(run) == 1
    assert done["data"]["action"]["reconciled"] is True


async def _held_at_execution(stack: Stack, run: Run) -> None:
    """Approve while the execute service is down; return once the workflow waits for it."""
    await stack.supervisor.hold(EXECUTE)
    await _approved(run)
    await asyncio.wait_for(run.wait_state("EXECUTING_ACTION"), 30)


async def _captured_job(stack: Stack, run: Run) -> Any:
    """Approve while the execute service is down and read the job waiting for it, once the
    relay has published it (the workflow enters the state when the job is committed, not yet
    published)."""
    await _held_at_execution(stack, run)

    async def published() -> Any:
        try:
            job = await stack.admin.jetstream().get_last_msg(
                subjects.STREAM_JOBS, subjects.job("support", "execute_action")
            )
        except NotFoundError:
            return None
        return job if job.data and run.workflow_id.encode() in job.data else None

    return await eventually(published, what="the execute job published")


async def _deliver_again(stack: Stack, job: Any) -> None:
    """What a crash between submitting the result and acking the job amounts to."""
    headers = {**(job.headers or {}), subjects.HEADER_MSG_ID: f"again-{uuid.uuid4()}"}
    await stack.admin.jetstream().publish(job.subject, job.data, headers=headers)


def _executed(view: dict[str, Any]) -> int:
    return sum(1 for a in view["audit"] if a["event_type"] == "ACTION_EXECUTED" and a["accepted"])


async def test_crash_after_submission_has_no_second_effect(stack: Stack) -> None:
    run = await stack.workflow()
    job = await _captured_job(stack, run)
    await stack.supervisor.release(EXECUTE)
    await asyncio.wait_for(run.wait_state("NOTIFYING_CUSTOMER", "COMPLETED"), 30)

    await stack.supervisor.hold(EXECUTE)
    await _deliver_again(stack, job)
    await stack.supervisor.release(EXECUTE)

    done = await _completed(run)
    await eventually(lambda: _stream_drained(stack), what="the redelivered job consumed")
    executes = [c for c in await calls(stack.dsn, run.customer_id) if c["operation"] == "execute"]
    assert len(executes) == 1  # the stale job was skipped before any provider call
    assert await stack.effects(run) == 1
    assert _executed(done) == 1


async def test_a_job_delivered_to_two_workers_commits_once_with_one_effect(
    stack: Stack,
) -> None:
    run = await stack.workflow()
    job = await _captured_job(stack, run)
    await _deliver_again(stack, job)  # two copies of one job, consumed concurrently

    await stack.supervisor.release(EXECUTE)

    done = await _completed(run)
    await eventually(lambda: _stream_drained(stack), what="both copies consumed")
    assert await stack.effects(run) == 1
    assert _executed(done) == 1


async def _stream_drained(stack: Stack) -> bool:
    info = await stack.admin.jetstream().consumer_info(
        subjects.STREAM_JOBS, subjects.stage_consumer("support", "execute_action")
    )
    return bool(info.num_pending == 0 and info.num_ack_pending == 0)


async def test_projector_crash_loses_nothing(stack: Stack) -> None:
    runs = [await stack.workflow() for _ in range(6)]
    await stack.supervisor.hold("projector")
    await stack.supervisor.release("projector")
    await asyncio.gather(*(_approved(run) for run in runs))
    for run in runs:
        done = await _completed(run)
        accepted = [a["state_version"] for a in done["audit"] if a["accepted"]]
        assert accepted == list(range(1, len(accepted) + 1))
        assert await stack.effects(run) == 1
