"""How each scenario plays its part: what the approver and the operator do, and when."""

from __future__ import annotations

from interlock.tools.demo.runner import OPERATOR, Run, approve

SETTLED = ("COMPLETED", "REJECTED", "CANCELLED", "FAILED", "FAILED_COMPENSATED", "MANUAL_REVIEW")


async def settle(run: Run) -> None:
    await run.wait_state(*SETTLED)


async def approve_when_asked(run: Run) -> None:
    await approve(run, await run.next_task())
    await settle(run)


async def reject_when_asked(run: Run) -> None:
    task = await run.next_task()
    await run.signal(
        "REJECTED_BY_REVIEWER",
        {
            "recommendation_version": task["recommendation_version"],
            "reason": "goodwill not warranted",
        },
    )
    await settle(run)


async def cancel_when_asked(run: Run) -> None:
    await run.next_task()
    await run.signal("CANCEL_REQUESTED", {"reason": "customer withdrew"}, OPERATOR)
    await settle(run)


async def approve_after_cancel(run: Run) -> None:
    task = await run.next_task()
    await run.signal("CANCEL_REQUESTED", {"reason": "customer withdrew"}, OPERATOR)
    await run.wait_state("CANCELLED")
    await run.decision(await approve(run, task))
    await settle(run)


async def stale_then_current(run: Run) -> None:
    first = await run.next_task()
    await run.signal(
        "CHANGES_REQUESTED",
        {
            "recommendation_version": first["recommendation_version"],
            "feedback": "offer an account credit instead",
        },
    )
    second = await run.next_task()
    stale = await approve(
        run, {**second, "recommendation_version": first["recommendation_version"]}
    )
    await run.decision(stale)
    await approve(run, second)
    await settle(run)


async def cancel_during_action(run: Run) -> None:
    await approve(run, await run.next_task())
    await run.wait_state("EXECUTING_ACTION")
    await run.signal("CANCEL_REQUESTED", {"reason": "customer withdrew"}, OPERATOR)
    await settle(run)


async def never_answer(run: Run) -> None:
    await run.next_task()
    await settle(run)
